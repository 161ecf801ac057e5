"""States that tell the truth: how a run ended, as it happened — over scripted commands."""

from __future__ import annotations

import os
import signal

import anyio
import pytest

from agent_habitat.errors import NotFoundError
from agent_habitat.events import Event
from agent_habitat.shell import Shell
from agent_habitat.shell.models import (
    HistoryArgs,
    KillArgs,
    LastArgs,
    RunArgs,
    WaitArgs,
    WaitResult,
    WhichArgs,
)
from agent_habitat.testing import FakeClock, FakeSpawner, Script
from agent_habitat.testing.clock import settle

from .conftest import OpenHabitat

pytestmark = pytest.mark.anyio


async def _serve(habitat: Shell, spawner: FakeSpawner, tab: str = "s") -> None:
    spawner.scripts["serve"] = Script(keep_running=True)
    await habitat.run(RunArgs(command="serve", tab=tab, background=True))


@pytest.mark.parametrize("name", ["INT", "USR1"])
async def test_a_run_ended_by_a_signal_we_sent_is_killed_by_it_whatever_its_trap_exits(
    habitat: Shell, spawner: FakeSpawner, name: str
) -> None:
    sig = signal.Signals[f"SIG{name}"]
    await _serve(habitat, spawner)
    spawner.last.traps[sig] = 0  # trap '…; exit 0' INT
    seen: list[Event] = []
    habitat.bus.subscribe(seen.append)
    await habitat.kill(KillArgs(tab="s", signal=name))
    row = (await habitat.history(HistoryArgs(tab="s"))).rows[-1]
    assert (row.state, row.exit_code) == ("killed", None)
    assert [(e.kind, e.data["signal"], e.data["exit_code"]) for e in seen] == [
        ("shell.run.killed", sig, None)
    ]
    last = await habitat.last(LastArgs(tab="s"))
    assert (last.state, last.signal) == ("killed", sig)


async def test_a_signal_from_elsewhere_is_reported_even_when_the_wrapper_wrote_a_code(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    await _serve(habitat, spawner)
    process = spawner.last
    # bash runs its EXIT trap on a fatal TERM, then dies of it.
    (process.output.parent / "state").write_bytes(f"143\0{process.cwd}\0".encode())
    process.die(signal.SIGTERM)
    waited = await habitat.wait(WaitArgs(tab="s", timeout_seconds=5))
    assert (waited.state, waited.exit_code, waited.signal) == ("killed", None, signal.SIGTERM)


async def test_a_wait_on_a_finished_run_reports_its_end_at_once(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    spawner.scripts["fail"] = Script(exit_code=4)
    await habitat.run(RunArgs(command="fail"))
    result = await habitat.wait(WaitArgs(timeout_seconds=30))
    assert (result.reason, result.state, result.exit_code) == ("exited", "exited", 4)


async def test_a_wait_on_a_run_that_ends_during_it_reports_its_exit_code(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    await _serve(habitat, spawner)
    result: list[WaitResult] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def go() -> None:
                result.append(await habitat.wait(WaitArgs(tab="s", timeout_seconds=30)))

            tg.start_soon(go)
            await settle()
            spawner.last.exit(4)
    [waited] = result
    assert waited.reason == "exited"
    assert waited.exit_code == 4


async def test_a_run_that_ended_unwatched_gets_its_end_time_from_the_wrapper(
    open_habitat: OpenHabitat, spawner: FakeSpawner, clock: FakeClock
) -> None:
    async with open_habitat() as first:
        await _serve(first, spawner)
    started = clock.time()
    spawner.last.exit(0)
    state = spawner.last.output.parent / "state"
    os.utime(state, (started + 2.0, started + 2.0))
    await clock.advance(6.46)  # someone looks much later
    async with open_habitat() as second:
        row = (await second.history(HistoryArgs(tab="s"))).rows[-1]
    assert (row.state, row.exit_code) == ("exited", 0)
    assert row.duration_s == pytest.approx(2.0, abs=0.01)


async def test_a_run_whose_wrapper_died_is_running_while_its_processes_live(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    await _serve(habitat, spawner)
    wrapper = spawner.last
    child = spawner.child(wrapper)
    wrapper.die(signal.SIGKILL)
    await settle()
    scene = await habitat.scene()
    assert [t.state for t in scene.tabs] == ["running"]
    assert (await habitat.last(LastArgs(tab="s"))).running
    killed = await habitat.kill(KillArgs(tab="s"))
    assert (killed.killed, killed.pids) == (True, [child.pid])
    assert not child.alive()
    row = (await habitat.history(HistoryArgs(tab="s"))).rows[-1]
    assert row.state == "killed"


async def test_a_wait_on_a_run_whose_wrapper_died_ends_with_its_last_process(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    await _serve(habitat, spawner)
    wrapper = spawner.last
    child = spawner.child(wrapper)
    wrapper.die(signal.SIGKILL)
    result: list[WaitResult] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def go() -> None:
                result.append(await habitat.wait(WaitArgs(tab="s", timeout_seconds=30)))

            tg.start_soon(go)
            await settle()
            assert result == []
            child.die(signal.SIGTERM)
    [waited] = result
    assert (waited.reason, waited.state) == ("exited", "killed")
    assert waited.signal == signal.SIGKILL


async def test_which_of_a_tab_that_does_not_exist_is_refused(habitat: Shell) -> None:
    with pytest.raises(NotFoundError, match=r"no tab 'nosuch'"):
        await habitat.which(WhichArgs(tab="nosuch"))
