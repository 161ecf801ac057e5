"""Runs survive the habitat that started them; a new habitat adopts them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from agent_habitat.config import ShellConfig
from agent_habitat.events import Event
from agent_habitat.habitat import Habitat
from agent_habitat.shell import Shell
from agent_habitat.shell.models import HistoryArgs, KillArgs, LastArgs, RunArgs, WaitArgs
from agent_habitat.shell.run_store import NewRun
from agent_habitat.testing import eventually
from agent_habitat.workspace import Workspace

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _open(project: Path) -> AsyncIterator[Shell]:
    config = ShellConfig(kill_grace_seconds=0.5)
    async with Habitat.open(Workspace.for_project(project), project=project, config=config) as h:
        yield h.shell


async def test_a_new_habitat_adopts_a_run_and_reports_its_exit(
    project: Path, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    async with _open(project) as first:
        started = await first.run(
            RunArgs(
                command=f"echo begin; while [ ! -e {go} ]; do sleep 0.02; done; exit 5",
                tab="bg",
                background=True,
            )
        )
        await first.wait(WaitArgs(tab="bg", until="begin", timeout_seconds=10))
    # The first habitat is gone; its run goes on.
    async with _open(project) as second:
        scene = await second.scene()
        assert scene.tabs[0].state == "running"
        assert scene.tabs[0].pid == started.pid
        events: list[Event] = []
        second.bus.subscribe(events.append)
        go.touch()
        with anyio.fail_after(10):
            waited = await second.wait(WaitArgs(tab="bg", timeout_seconds=10))
        assert (waited.reason, waited.exit_code) == ("exited", 5)
        assert [e.kind for e in events] == ["shell.run.exited"]


async def test_a_run_that_vanished_unwatched_is_marked_lost_with_its_output(
    project: Path,
) -> None:
    async with _open(project) as first:
        started = await first.run(
            RunArgs(command="echo partial output; sleep 300", tab="bg", background=True)
        )
        await first.wait(WaitArgs(tab="bg", until="partial", timeout_seconds=10))
    assert started.pid is not None
    os.killpg(started.pid, signal.SIGKILL)
    pid = started.pid
    await eventually(lambda: not _is_running(pid))
    async with _open(project) as second:
        rows = (await second.history(HistoryArgs(tab="bg"))).rows
        assert rows[-1].state == "lost"
        last = await second.last(LastArgs(tab="bg"))
        assert last.output == "partial output\n"


def _is_running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


async def test_a_background_run_started_by_another_process_is_adopted(project: Path) -> None:
    """The CLI starts a run and exits at once; the habitat here sees it and its end."""
    code = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_habitat",
            "run",
            "--project",
            str(project),
            "--tab",
            "cli",
            "--background",
            "echo from-cli; sleep 0.3; echo finished",
        ],
        capture_output=True,
        text=True,
        check=False,
        env=os.environ,
    )
    assert code.returncode == 0, code.stderr
    async with _open(project) as habitat:
        with anyio.fail_after(20):
            waited = await habitat.wait(WaitArgs(tab="cli", timeout_seconds=20))
        assert waited.reason in ("exited", "not_running")
        assert waited.exit_code == 0
        assert waited.output == "from-cli\nfinished\n"


def _spawn_marked(marker: str) -> subprocess.Popen[bytes]:
    """A run's process as its spawner starts it: a session leader carrying the marker."""
    env = {**os.environ, "HABITAT_RUN_ID": marker}
    return subprocess.Popen(["sleep", "30"], env=env, start_new_session=True)


async def test_a_run_whose_habitat_died_before_recording_its_pid_is_adopted_and_killed(
    project: Path, tmp_path: Path
) -> None:
    async with _open(project) as habitat:
        # The spawner's steps up to the spawn, then it "dies": the row never gets its pid.
        opened = habitat.store.open_run(
            NewRun(
                tab="orphan",
                command="sleep 30",
                cwd=str(tmp_path),
                shell="/bin/sh",
                background=True,
                interactive=False,
            ),
            spool_dir=habitat.workspace.spool_dir,
            max_tabs=habitat.config.max_tabs,
            keep=habitat.config.history_rows,
        )
        run = opened.run
        run.run_dir.mkdir(parents=True, exist_ok=True)
        proc = _spawn_marked(run.marker)
        try:
            killed = await habitat.kill(KillArgs(tab="orphan"))
            assert killed.killed
            assert proc.pid in killed.pids
            assert killed.remaining == []
            proc.wait(timeout=10)
            rows = (await habitat.history(HistoryArgs(tab="orphan"))).rows
            assert rows[-1].state == "killed"
            after = await habitat.run(RunArgs(command="echo next", tab="orphan"))
            assert after.exit_code == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
