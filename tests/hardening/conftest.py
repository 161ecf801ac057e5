from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psutil
import pytest

from agent_habitat.config import ShellConfig
from agent_habitat.habitat import Habitat
from agent_habitat.proc import cgroup, kill_tree, members
from agent_habitat.workspace import Workspace


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
async def opened(project: Path) -> AsyncIterator[Habitat]:
    """A real habitat over `project` (real processes); what its runs left is killed after."""
    async with Habitat.open(
        Workspace.for_project(project),
        project=project,
        config=ShellConfig(kill_grace_seconds=0.5),
    ) as habitat:
        yield habitat
        for row in habitat.db.query("SELECT id FROM runs"):
            run = habitat.shell.store.get(row["id"])
            if run is not None and run.record is not None and members(run.record):
                await kill_tree(run.record, grace=0.2)


@pytest.fixture
def no_run_cgroups(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process behaves as on a machine that gives it no cgroup."""
    monkeypatch.setenv("HABITAT_RUN_CGROUPS", "0")
    cgroup.reset()
    yield
    monkeypatch.delenv("HABITAT_RUN_CGROUPS")
    cgroup.reset()


def processes_running(argv: list[str]) -> list[psutil.Process]:
    """Live processes whose command line is exactly `argv` (tests use unique sleeps)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if proc.info["cmdline"] == argv and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


@contextlib.contextmanager
def stand_in(script: str, *args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Another habitat process running `script` (`python -c script *args`), and the first line
    it prints. It lives until its stdin is closed (when the script reads it to the end) or it
    is killed, which it is on the way out. Alive, its run groups are no sweep's business; once
    gone, every habitat process on the machine may sweep them, each on its first spawn."""
    with subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None
        try:
            yield process, process.stdout.readline()
        finally:
            process.kill()
