"""Warm-up work stopped while a verify runs (runner/give_way.py): real processes in sessions
of their own, the bus's request and verdict events."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import anyio
import psutil
import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.testing import eventually
from agent_habitat.verify.runner.give_way import GiveWay
from agent_habitat.verify.toolchains.rust.warm import Yielding

pytestmark = pytest.mark.anyio


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def _stopped(pid: int) -> bool:
    return bool(psutil.Process(pid).status() == psutil.STATUS_STOPPED)


async def test_a_group_is_stopped_from_the_request_to_the_last_verdict(
    sleeper: subprocess.Popen[bytes],
) -> None:
    bus = InMemoryEventBus("t")
    give_way = GiveWay(bus)
    with give_way.listening(), give_way.holding():
        give_way.add_process(sleeper.pid)
        assert not _stopped(sleeper.pid)
        bus.publish("environment.task.queued", task="v1")
        bus.publish("environment.task.queued", task="v2")  # a second verify, coalesced or not
        await eventually(lambda: _stopped(sleeper.pid))
        bus.publish("verify.epoch.finished", task="v1")
        assert give_way.busy  # v2 still runs
        bus.publish("verify.epoch.finished", task="v2")
        await eventually(lambda: not _stopped(sleeper.pid))
        assert give_way.stops == 1


async def test_a_group_added_while_a_verify_runs_is_stopped_at_once_and_let_go_with_its_step(
    sleeper: subprocess.Popen[bytes],
) -> None:
    bus = InMemoryEventBus("t")
    give_way = GiveWay(bus)
    with give_way.listening():
        bus.publish("environment.task.queued", task="v1")
        with give_way.holding():
            give_way.add_process(sleeper.pid)
            await eventually(lambda: _stopped(sleeper.pid))
        # The step ended (the daemon now answers the verifies): continued, and no longer
        # stopped by the next request.
        await eventually(lambda: not _stopped(sleeper.pid))
        bus.publish("environment.task.queued", task="v2")
        assert not _stopped(sleeper.pid)


async def test_listening_ends_with_every_group_continued(
    sleeper: subprocess.Popen[bytes],
) -> None:
    # A host closing mid-verify: a stopped process would not act on the SIGTERM that ends it.
    bus = InMemoryEventBus("t")
    give_way = GiveWay(bus)
    with give_way.holding():
        with give_way.listening():
            give_way.add_process(sleeper.pid)
            bus.publish("environment.task.queued", task="v1")
            await eventually(lambda: _stopped(sleeper.pid))
        await eventually(lambda: not _stopped(sleeper.pid))


def test_the_habitats_own_group_is_never_added() -> None:
    give_way = GiveWay(InMemoryEventBus("t"))
    give_way.add(os.getpgrp())
    give_way.add_process(os.getpid())
    assert not give_way._groups


async def test_a_cargo_projects_warm_run_is_cancelled_by_a_verify_and_runs_again_after_it() -> None:
    # toolchains/rust/warm.py: its cargo would hold a target folder's lock the verify's own
    # runs wait for, so it is cancelled, not stopped, and asked again once no verify runs.
    bus = InMemoryEventBus("t")
    give_way = GiveWay(bus)
    runs: list[str] = []
    answers: list[str] = []

    async def work() -> str:
        runs.append("run")
        if len(runs) == 1:
            await anyio.sleep_forever()  # under way when the verify comes
        return "built"

    yielding = Yielding(give_way)
    with give_way.listening():
        async with anyio.create_task_group() as tg:

            async def warm() -> None:
                answers.append(await yielding(work))

            tg.start_soon(warm)
            await eventually(lambda: runs == ["run"])
            bus.publish("environment.task.queued", task="v1")
            await anyio.wait_all_tasks_blocked()
            assert (runs, answers) == (["run"], [])  # cancelled, and waiting for the verify
            bus.publish("verify.epoch.finished", task="v1")  # the task group waits for it
    assert (runs, answers, yielding.times) == (["run", "run"], ["built"], 1)


async def test_a_warm_run_asked_while_a_verify_runs_waits_for_it() -> None:
    bus = InMemoryEventBus("t")
    give_way = GiveWay(bus)
    runs: list[str] = []

    async def work() -> str:
        runs.append("run")
        return "built"

    with give_way.listening():
        bus.publish("environment.task.queued", task="v1")
        async with anyio.create_task_group() as tg:
            tg.start_soon(Yielding(give_way), work)
            await anyio.wait_all_tasks_blocked()
            assert runs == []
            bus.publish("verify.epoch.finished", task="v1")
    assert runs == ["run"]
