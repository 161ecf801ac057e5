"""`wait`: returns on a match, on the run's end, or at the timeout, with progress — over
scripted commands and a clock that moves only when told."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import pytest

from agent_habitat.events import Event
from agent_habitat.proc import spool as spool_module
from agent_habitat.shell import Shell
from agent_habitat.shell.models import RunArgs, WaitArgs, WaitResult
from agent_habitat.testing import FakeClock, FakeSpawner, Script
from agent_habitat.testing.clock import settle

from .conftest import OpenHabitat

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def waiting(call: Callable[[], Awaitable[WaitResult]]) -> AsyncIterator[list[WaitResult]]:
    """Start `call` and let it block; the block's body acts; the result is there after it."""
    result: list[WaitResult] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def go() -> None:
                result.append(await call())

            tg.start_soon(go)
            await settle()
            yield result


async def _serve(habitat: Shell, spawner: FakeSpawner, output: str = "") -> None:
    spawner.scripts["serve"] = Script(output=output, keep_running=True)
    await habitat.run(RunArgs(command="serve", tab="s", background=True))


async def test_a_finished_run_reports_its_end_at_once(habitat: Shell) -> None:
    await habitat.run(RunArgs(command="true"))
    result = await habitat.wait(WaitArgs(timeout_seconds=30))
    assert (result.reason, result.state, result.exit_code) == ("exited", "exited", 0)


async def test_a_pattern_in_the_output_of_a_finished_run_still_matches(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    spawner.scripts["build"] = Script(output="built in 3s\n")
    await habitat.run(RunArgs(command="build"))
    result = await habitat.wait(WaitArgs(until=r"built in \d+s"))
    assert (result.reason, result.match) == ("matched", "built in 3s")


async def test_a_match_in_output_printed_before_the_wait(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    await _serve(habitat, spawner, output="listening on 8080\n")
    result = await habitat.wait(WaitArgs(tab="s", until=r"listening on (\d+)"))
    assert (result.reason, result.match, result.state) == (
        "matched",
        "listening on 8080",
        "running",
    )


async def test_a_match_in_output_printed_while_waiting_even_across_two_writes(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    await _serve(habitat, spawner, output="booting\n")
    async with waiting(lambda: habitat.wait(WaitArgs(tab="s", until=r"listening on \d+\n"))) as r:
        spawner.last.write("listening on ")
        await settle()
        assert r == []
        spawner.last.write("8080\n")
    assert (r[0].reason, r[0].match) == ("matched", "listening on 8080\n")
    assert r[0].output == "booting\nlistening on 8080\n"


async def test_the_run_exiting_ends_the_wait_with_its_exit_code(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    await _serve(habitat, spawner)
    async with waiting(lambda: habitat.wait(WaitArgs(tab="s", until="never"))) as r:
        spawner.last.exit(4)
    assert (r[0].reason, r[0].state, r[0].exit_code) == ("exited", "exited", 4)


async def test_output_printed_just_before_the_exit_is_matched_first(
    habitat: Shell, spawner: FakeSpawner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without inotify new output is noticed only at the next poll; with the poll an hour
    # away the end is always seen first (at 50 ms a loaded machine saw either first): the
    # wait must still search what was printed before it.
    monkeypatch.setattr(spool_module, "_libc", lambda: None)
    monkeypatch.setattr(spool_module, "_POLL_SECONDS", 3600.0)
    await _serve(habitat, spawner)
    async with waiting(lambda: habitat.wait(WaitArgs(tab="s", until="DONE"))) as r:
        spawner.last.write("DONE\n")
        spawner.last.exit(0)
    assert (r[0].reason, r[0].match, r[0].state) == ("matched", "DONE", "exited")


async def test_a_kill_ends_the_wait(habitat: Shell, spawner: FakeSpawner) -> None:
    from agent_habitat.shell.models import KillArgs

    await _serve(habitat, spawner)
    async with waiting(lambda: habitat.wait(WaitArgs(tab="s"))) as r:
        await habitat.kill(KillArgs(tab="s"))
    assert (r[0].reason, r[0].state) == ("exited", "killed")


async def test_closing_the_tab_ends_the_wait_with_the_run_killed(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    from agent_habitat.shell.models import CloseArgs

    await _serve(habitat, spawner)
    async with waiting(lambda: habitat.wait(WaitArgs(tab="s"))) as r:
        await habitat.close(CloseArgs(tab="s"))
    assert (r[0].reason, r[0].state, r[0].exit_code) == ("exited", "killed", None)


async def test_the_wait_times_out_at_its_timeout_not_before(
    habitat: Shell, spawner: FakeSpawner, clock: FakeClock
) -> None:
    await _serve(habitat, spawner)
    async with waiting(lambda: habitat.wait(WaitArgs(tab="s", timeout_seconds=30))) as r:
        await clock.advance(29.9)
        assert r == []
        await clock.advance(0.1)
        assert [(x.reason, x.state) for x in r] == [("timeout", "running")]


async def test_progress_comes_four_times_a_second_with_the_last_line(
    habitat: Shell, spawner: FakeSpawner, clock: FakeClock
) -> None:
    await _serve(habitat, spawner, output="warming\n\n")
    seen: list[tuple[float, str]] = []

    async def progress(elapsed: float, line: str) -> None:
        seen.append((elapsed, line))

    wait = WaitArgs(tab="s", until="never", timeout_seconds=0.9)
    async with waiting(lambda: habitat.wait(wait, progress)) as r:
        await clock.advance(0.5)
        spawner.last.write("hot\n")
        await clock.advance(0.4)
    assert seen == [(0.25, "warming"), (0.5, "warming"), (0.75, "hot")]
    assert r[0].reason == "timeout"


async def test_the_end_of_a_run_another_habitat_started_is_seen_and_recorded_once(
    open_habitat: OpenHabitat, spawner: FakeSpawner
) -> None:
    spawner.scripts["serve"] = Script(keep_running=True)
    async with open_habitat() as here, open_habitat() as there:
        events: list[Event] = []
        here.bus.subscribe(events.append)
        there.bus.subscribe(events.append)
        await there.run(RunArgs(command="serve", tab="s", background=True))
        async with waiting(lambda: here.wait(WaitArgs(tab="s"))) as r:
            spawner.last.exit(5)
    assert (r[0].reason, r[0].exit_code) == ("exited", 5)
    assert [e.kind for e in events] == ["shell.tab.opened", "shell.run.started", "shell.run.exited"]
