"""A run that ends while processes it started live on says so (`left_running` in its result,
the scene and its `shell.run.exited` event), and `kill`/`close` on the tab still stop them;
a daemon that drops the run's marker (`env -i`) is still found, through the run's cgroup,
and where there is none the kill says what it could not look for."""

from __future__ import annotations

import os
import signal

import pytest

from agent_habitat.habitat import Habitat
from agent_habitat.proc import cgroup
from agent_habitat.shell.models import CloseArgs, KillArgs, RunArgs, WaitArgs
from agent_habitat.testing import eventually

from .conftest import processes_running

pytestmark = pytest.mark.anyio

# Each test's sleep is its own, and this test process's (3021.<pid>): tests on other workers,
# and another suite on the machine, look for theirs by command line.
_OWN = os.getpid()


def _daemon(seconds: int) -> str:
    return f"(setsid sh -c 'sleep {seconds}.{_OWN}' &); echo started"


def _pids(argv: list[str]) -> set[int]:
    return {p.pid for p in processes_running(argv)}


CLEAN = "(setsid env -i /bin/sleep {} &); echo ready; sleep 100"


async def test_a_run_that_leaves_a_daemon_says_so_and_kill_still_stops_it(
    opened: Habitat,
) -> None:
    shell = opened.shell
    result = await shell.run(RunArgs(command=_daemon(3021)))
    assert (result.state, result.exit_code) == ("exited", 0)
    commands = [p.command for p in result.left_running]
    assert any(f"sleep 3021.{_OWN}" in c for c in commands), result.left_running
    assert {p.index for p in result.left_running} == {result.index}
    [event] = [e for e in opened.journal.since(0) if e.kind == "shell.run.exited"]
    assert [p["pid"] for p in event.data["left_running"]] == [p.pid for p in result.left_running]
    scene = await shell.scene()
    assert [p.pid for p in scene.tabs[0].left_running] == [p.pid for p in result.left_running]

    # A later run of the tab does not hide them: the scene still lists them.
    await shell.run(RunArgs(command="true"))
    scene = await shell.scene()
    assert [p.pid for p in scene.tabs[0].left_running] == [p.pid for p in result.left_running]

    killed = await shell.kill(KillArgs(tab="main"))
    assert killed.killed
    assert killed.index == result.index
    assert set(killed.pids) >= {p.pid for p in result.left_running}
    assert killed.remaining == []
    assert processes_running(["sleep", f"3021.{_OWN}"]) == []
    assert (await shell.scene()).tabs[0].left_running == []


async def test_close_stops_what_the_tabs_runs_left_running(opened: Habitat) -> None:
    shell = opened.shell
    result = await shell.run(RunArgs(command=_daemon(3022), tab="t"))
    assert result.left_running
    closed = await shell.close(CloseArgs(tab="t"))
    assert closed.killed
    assert processes_running(["sleep", f"3022.{_OWN}"]) == []


async def test_a_run_that_leaves_nothing_lists_nothing(opened: Habitat) -> None:
    result = await opened.shell.run(RunArgs(command="sleep 0.01 & wait; echo done"))
    assert result.left_running == []
    [event] = [e for e in opened.journal.since(0) if e.kind == "shell.run.exited"]
    assert event.data["left_running"] == []


@pytest.mark.skipif(cgroup.tracking() != "cgroup", reason="this machine gives no cgroup per run")
async def test_a_daemon_that_clears_its_environment_is_killed_with_its_run(
    opened: Habitat,
) -> None:
    shell = opened.shell
    sleeping = ["/bin/sleep", f"3031.{_OWN}"]
    await shell.run(RunArgs(command=CLEAN.format(sleeping[1]), background=True))
    assert (await shell.wait(WaitArgs(until="ready", timeout_seconds=10))).reason == "matched"
    await eventually(lambda: processes_running(sleeping) != [])
    [daemon] = processes_running(sleeping)
    assert "HABITAT_RUN_ID" not in daemon.environ()  # the marker is gone: only the cgroup knows
    killed = await shell.kill(KillArgs(tab="main"))
    assert killed.tracking == "cgroup"
    assert killed.untracked is None
    assert daemon.pid in killed.pids
    assert killed.remaining == []
    assert daemon.pid not in _pids(sleeping)


async def test_without_a_cgroup_kill_says_what_it_could_not_look_for(
    opened: Habitat, no_run_cgroups: None
) -> None:
    shell = opened.shell
    sleeping = ["/bin/sleep", f"3032.{_OWN}"]
    await shell.run(RunArgs(command=CLEAN.format(sleeping[1]), background=True))
    assert (await shell.wait(WaitArgs(until="ready", timeout_seconds=10))).reason == "matched"
    await eventually(lambda: processes_running(sleeping) != [])
    [daemon] = processes_running(sleeping)
    try:
        killed = await shell.kill(KillArgs(tab="main"))
        assert killed.remaining == []
        assert killed.tracking == "marker"
        assert killed.untracked is not None
        assert "env -i" in killed.untracked
    finally:
        daemon.send_signal(signal.SIGKILL)


async def test_while_a_later_run_runs_the_scene_still_lists_what_the_earlier_one_left(
    opened: Habitat,
) -> None:
    shell = opened.shell
    result = await shell.run(RunArgs(command=_daemon(3024), tab="d"))
    left = [p.pid for p in result.left_running]
    assert left
    await shell.run(RunArgs(command="sleep 3025", tab="d", background=True))
    for _ in range(2):  # the second scene asks again for the run before the running one
        [tab] = (await shell.scene()).tabs
        assert tab.state == "running"
        assert [p.pid for p in tab.left_running] == left
    closed = await shell.close(CloseArgs(tab="d"))
    assert closed.killed
    assert processes_running(["sleep", f"3024.{_OWN}"]) == []
