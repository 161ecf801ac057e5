"""Reads of a loud run's spool never freeze the habitat: a wait over a fast writer ends by
its timeout and other calls are answered all along it (between two answers the process
spends little CPU: a scan that held the loop, or the GIL, would spend its whole timeout's
worth there); a scan stops when its call gives up."""

from __future__ import annotations

import itertools
import time

import anyio
import anyio.lowlevel
import pytest

from agent_habitat.config import ShellConfig
from agent_habitat.proc.spool import Spool
from agent_habitat.shell import Shell
from agent_habitat.shell.models import LastArgs, RunArgs, WaitArgs, WaitResult
from agent_habitat.testing import eventually

pytestmark = pytest.mark.anyio


@pytest.fixture
def shell_config() -> ShellConfig:
    return ShellConfig(kill_grace_seconds=0.5, spool_run_budget_bytes=64 * 1024**2)


async def _loud(habitat: Shell, tab: str) -> Spool:
    await habitat.run(RunArgs(command="exec yes", tab=tab, background=True))
    run = habitat.store.by_index(tab, None)
    assert run is not None
    return Spool(run.files.output)


async def test_a_wait_over_a_fast_writer_ends_by_its_timeout_and_others_are_answered(
    habitat: Shell,
) -> None:
    spool = await _loud(habitat, "loud")
    await eventually(lambda: spool.size() > 100 * 1024**2, within=60)
    waited: list[WaitResult] = []
    # The process's CPU time (every thread's) when the wait began, at each answer given
    # during it, and when it ended. CPU, not the wall: on a loaded machine the process may
    # get no CPU at all for a second, which says nothing about the habitat; what does is
    # work done while no answer could get through (the loop held, or the GIL).
    moments: list[float] = []

    async def wait() -> None:
        moments.append(time.process_time())
        waited.append(
            await habitat.wait(WaitArgs(tab="loud", until="NEVER PRINTED", timeout_seconds=2))
        )
        moments.append(time.process_time())

    # Generous: the timeout is 2 s; the bound says "not 30 s late", not how fast.
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            while not moments:  # the wait begins first
                await anyio.lowlevel.checkpoint()
            while not waited:
                await habitat.scene()
                if not waited:
                    moments.append(time.process_time())
                await anyio.sleep(0.05)
    assert waited[0].reason == "timeout"
    # Not "one answer got through": the habitat answered all along the 2 s wait. A wait that
    # held the loop (or the GIL) scanning for most of its timeout spends a second or more of
    # CPU between two answers; the bound is a quarter of the timeout.
    longest_gap = max(later - earlier for earlier, later in itertools.pairwise(moments))
    assert len(moments) >= 4, moments
    assert longest_gap < 0.5, (longest_gap, len(moments))


async def test_a_grep_over_a_big_spool_stops_when_its_call_gives_up(
    habitat: Shell,
) -> None:
    spool = await _loud(habitat, "big")
    await eventually(lambda: spool.size() > 200 * 1024**2, within=60)
    scenes = 0

    async def scenes_meanwhile() -> None:
        nonlocal scenes
        while True:
            await habitat.scene()
            scenes += 1
            await anyio.sleep(0.01)

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(scenes_meanwhile)
            # A lookahead makes every line a candidate: the slow path, line by line, through
            # 64 MiB of `y` lines (a minute's work), given up after a second.
            with anyio.move_on_after(1) as scope:
                await habitat.last(LastArgs(tab="big", grep="(?=y)yy"))
            tg.cancel_scope.cancel()
    assert scope.cancelled_caught
    assert scenes >= 1
