from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_habitat.reach import stop_host
from module_host import module_host


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
    with module_host(tmp_path_factory, module_project) as shared:
        yield shared


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
