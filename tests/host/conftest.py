from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_habitat.reach import ensure_host, stop_host


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """A project folder whose host, if a test started one, is stopped afterwards."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    yield root
    stop_host(root)


@pytest.fixture(scope="module")
def module_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project folder of a module's shared host; a module may override it (a git repo)."""
    root = tmp_path_factory.mktemp("module-project") / "project"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture(scope="module")
def _module_host(
    tmp_path_factory: pytest.TempPathFactory, module_project: Path
) -> Iterator[tuple[Path, Path]]:
    """One home folder and one project for a module, its host started once (with loopback
    TCP) and stopped after the module's last test: a host start costs about 2 CPU-s, and
    a test that only reads from a host does not need a fresh one."""
    # A short name: the host's socket is <home>/workspaces/project-<hash>/host.sock, and
    # under xdist's `popen-gwN` folder "habitat-module-home0" made it too long for AF_UNIX
    # (every test of the module was an error in a CI run of 0b47ce0).
    home = tmp_path_factory.mktemp("hm")
    root = module_project
    with pytest.MonkeyPatch.context() as patch:
        # What the autouse `habitat_home` gives each test; this host outlives any one test.
        patch.setenv("HABITAT_HOME", str(home))
        patch.setenv("HABITAT_LADDER_WARMUP", "false")
        patch.setenv("HABITAT_LADDER_FETCH_CHECKERS", "false")
        ensure_host(root, tcp="127.0.0.1:0")
        try:
            yield home, root
        finally:
            # Whatever a test left in the environment (a test that asked for this fixture
            # by `request.getfixturevalue` had its own monkeypatch undo this one's setenv).
            patch.setenv("HABITAT_HOME", str(home))
            stop_host(root)


@pytest.fixture
def shared_project(
    _module_host: tuple[Path, Path], habitat_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The module's project, its host already running and shared by the module's tests that
    ask for it: the test's `HABITAT_HOME` is the module's home (after the autouse
    per-test one), so the CLI and `host_files` find that host."""
    home, root = _module_host
    monkeypatch.setenv("HABITAT_HOME", str(home))
    return root
