"""A host shared by a test module's tests (tests/host/conftest.py, tests/security/conftest.py):
started once with loopback TCP in a home folder of its own, stopped after the module."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agent_habitat.reach import ensure_host, stop_host


@contextmanager
def module_host(
    tmp_path_factory: pytest.TempPathFactory, root: Path
) -> Iterator[tuple[Path, Path]]:
    """(home, root) with `root`'s host running in `home`. The home's name is short: the
    host's socket is <home>/workspaces/project-<hash>/host.sock, and under xdist's `popen-gwN`
    folder "habitat-module-home0" made it too long for AF_UNIX (every test of the module was
    an error in a CI run of 0b47ce0)."""
    home = tmp_path_factory.mktemp("hm")
    with pytest.MonkeyPatch.context() as patch:
        # What the autouse `habitat_home` gives each test; this host outlives any one test.
        patch.setenv("HABITAT_HOME", str(home))
        patch.setenv("HABITAT_LADDER_WARMUP", "false")
        patch.setenv("HABITAT_LADDER_FETCH_CHECKERS", "false")
        ensure_host(root, tcp="127.0.0.1:0")
        try:
            yield home, root
        finally:
            # Whatever a test left in the environment (a test that asked for the fixture by
            # `request.getfixturevalue` had its own monkeypatch undo this one's setenv).
            patch.setenv("HABITAT_HOME", str(home))
            stop_host(root)
