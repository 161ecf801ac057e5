"""The lull: what a run's end leaves to do waits while a run is being answered, then runs,
in order, in one task; calls back to back still get it done within the bound."""

from __future__ import annotations

import threading

import anyio
import anyio.lowlevel
import pytest

from agent_habitat.shell import lull
from agent_habitat.shell.lull import Lull

pytestmark = pytest.mark.anyio


async def _turns(count: int) -> None:
    for _ in range(count):
        await anyio.lowlevel.checkpoint()


async def test_a_job_waits_while_a_run_is_answered_and_runs_once_none_is() -> None:
    done: list[str] = []
    ran = anyio.Event()

    async def job() -> None:
        done.append("job")
        ran.set()

    async with anyio.create_task_group() as tg:
        waits = Lull(tg)
        with waits.answer():
            waits.later(job)
            await _turns(50)  # far more turns than an answer takes
            assert done == []
        with anyio.fail_after(10):
            await ran.wait()
    assert done == ["job"]


async def test_jobs_run_in_the_order_they_were_left_and_a_failing_one_drops_none() -> None:
    done: list[int] = []
    last = anyio.Event()

    async def ok(n: int) -> None:
        done.append(n)
        if n == 3:
            last.set()

    async def fails() -> None:
        raise OSError("the folder went with a closed tab")

    async with anyio.create_task_group() as tg:
        waits = Lull(tg)
        waits.later(lambda: ok(1))
        waits.later(fails)
        waits.later(lambda: ok(2))
        await _turns(1)
        waits.later(lambda: ok(3))  # left while the others wait: the same task runs it
        with anyio.fail_after(10):
            await last.wait()
    assert done == [1, 2, 3]


async def test_calls_back_to_back_still_get_the_work_done_within_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(lull, "_BOUND", 0.05)
    ran = anyio.Event()

    async def job() -> None:
        ran.set()

    async with anyio.create_task_group() as tg:
        waits = Lull(tg)
        with waits.answer():  # never a lull while the job waits
            waits.later(job)
            with anyio.fail_after(10):
                await ran.wait()


async def test_a_job_left_at_the_close_still_runs() -> None:
    ran: list[bool] = []

    async def job() -> None:
        ran.append(True)

    async with anyio.create_task_group() as tg:
        waits = Lull(tg)
        waits.later(job)
        tg.cancel_scope.cancel()  # the shell closing: the job is shielded
    assert ran == [True]


async def test_a_blocking_job_runs_in_a_worker_thread_beside_the_others_once_at_a_time() -> None:
    release = threading.Event()
    threads: list[str] = []
    other = anyio.Event()

    def blocking() -> None:
        threads.append(threading.current_thread().name)
        release.wait(10)  # a sync of the disk, say

    async def next_job() -> None:
        other.set()

    async with anyio.create_task_group() as tg:
        waits = Lull(tg)
        waits.in_thread(blocking)
        waits.later(next_job)
        with anyio.fail_after(10):
            await other.wait()  # the job after it did not wait for it
        waits.in_thread(blocking)  # still running: not again
        release.set()
    assert len(threads) == 1
    assert threads[0] != threading.main_thread().name


async def test_a_job_left_apart_holds_back_none_of_the_jobs_after_it() -> None:
    release = anyio.Event()
    after = anyio.Event()
    done: list[str] = []

    async def long_job() -> None:  # a prestart waiting on its worker thread, say
        await release.wait()
        done.append("apart")

    async def quick_job() -> None:  # a run's end, written to the database
        done.append("quick")
        after.set()

    async with anyio.create_task_group() as tg:
        waits = Lull(tg)
        waits.apart(long_job)
        waits.later(quick_job)
        with anyio.fail_after(10):
            await after.wait()  # while the job before it still waits
        assert done == ["quick"]
        release.set()
    assert done == ["quick", "apart"]


async def test_a_job_left_apart_at_the_close_still_runs() -> None:
    ran: list[bool] = []

    async def job() -> None:
        await anyio.lowlevel.checkpoint()
        ran.append(True)

    async with anyio.create_task_group() as tg:
        waits = Lull(tg)
        waits.apart(job)
        tg.cancel_scope.cancel()  # the shell closing: the job is shielded
    assert ran == [True]
