"""A clock for tests: it stands still until the test moves it.

Code under test sleeps on it (`await clock.sleep(5)`); the test calls `await
clock.advance(5)`, which lets every task settle, then wakes the sleepers whose time has
come, in order of their deadlines — so a 30-second timeout is tested in microseconds.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools

import anyio
import anyio.lowlevel

__all__ = ["FakeClock", "settle"]


class FakeClock:
    """Implements `agent_habitat.clock.Clock`."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._epoch = start
        self._now = 0.0
        self._sleepers: list[tuple[float, int, anyio.Event]] = []
        self._order = itertools.count()

    def time(self) -> float:
        return self._epoch + self._now

    def monotonic(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await anyio.lowlevel.checkpoint()
            return
        entry = (self._now + seconds, next(self._order), anyio.Event())
        heapq.heappush(self._sleepers, entry)
        try:
            await entry[2].wait()
        finally:
            if entry in self._sleepers:  # cancelled before its time
                self._sleepers.remove(entry)
                heapq.heapify(self._sleepers)

    @property
    def sleepers(self) -> int:
        """How many tasks sleep on this clock now."""
        return len(self._sleepers)

    async def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`, waking each sleeper at its own deadline.

        Before each wake every other task runs until it blocks, so a task woken earlier
        may sleep again and be woken again within the same advance (a progress loop).
        """
        target = self._now + seconds
        while True:
            await settle()
            if not self._sleepers or self._sleepers[0][0] > target:
                break
            deadline, _, event = heapq.heappop(self._sleepers)
            self._now = max(self._now, deadline)
            event.set()
        self._now = target
        await settle()


async def settle() -> None:
    """Return once every other task waits on something (an event, a thread, I/O).

    `anyio.wait_all_tasks_blocked` does this, but on asyncio it sleeps 0.1 s whenever a task
    can still run; yielding instead keeps a test that advances a clock in milliseconds.
    """
    try:
        this = asyncio.current_task()
    except RuntimeError:  # not on asyncio (trio)
        this = None
    if this is None:
        await anyio.wait_all_tasks_blocked()
        return
    while True:
        await asyncio.sleep(0)
        if all(t is this or _blocked(t) for t in asyncio.all_tasks()):
            return


def _blocked(task: asyncio.Task[object]) -> bool:
    # What anyio's own check reads: the future the task waits on, if any.
    waiter = getattr(task, "_fut_waiter", None)
    return waiter is not None and not waiter.done()
