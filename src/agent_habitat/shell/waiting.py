"""Waiting on a run: a foreground run's exit, limit and progress; the `wait` verb's match,
exit or timeout.

Nothing here polls. The exit comes from the process (pidfd, through the run's watcher),
new output from the spool's folder (inotify, `proc.spool.Growth`), deadlines and progress
intervals from the injected clock.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Literal, NamedTuple

import anyio
import anyio.to_thread

from ..clock import Clock
from ..proc.spawner import ProcessHandle
from ..proc.spool import Growth, Spool
from .output import ClientPattern, clean_text, last_line
from .run_store import RunRow
from .supervisor import RunSupervisor

__all__ = [
    "PROGRESS_INTERVAL",
    "Progress",
    "WaitReason",
    "Waited",
    "wait_for_run",
    "wait_with_progress",
]

Progress = Callable[[float, str], Awaitable[None]]
"""(elapsed seconds, last line of output) → None."""

WaitReason = Literal["matched", "exited", "timeout", "not_running"]


class Waited(NamedTuple):
    reason: WaitReason
    match: str | None = None
    """The text `until` matched."""
    ended: RunRow | None = None
    """The run's row as its end was recorded, when the wait saw the end."""


# At most four progress reports a second (DESIGN §4).
PROGRESS_INTERVAL = 0.25
# How much of the spool a scan for `until` reads per trip to a worker thread (in the spool's
# chunks): a burst of output between two looks must not fill memory, nor keep a timeout
# waiting.
_SCAN_TRIP_BYTES = 8 << 20
# The unfinished last line kept between chunks: the pattern may complete with the next write.
_PENDING_CHARS = 4096


async def _report(progress: Progress, spool: Spool, clock: Clock) -> None:
    started = clock.monotonic()
    while True:
        await clock.sleep(PROGRESS_INTERVAL)
        await progress(round(clock.monotonic() - started, 2), last_line(spool.path))


async def _deadline(clock: Clock, seconds: float, expired: Callable[[], None]) -> None:
    await clock.sleep(seconds)
    expired()


async def wait_with_progress(
    process: ProcessHandle,
    spool: Spool,
    limit: float | None,
    progress: Progress | None,
    clock: Clock,
) -> tuple[bool, int | None]:
    """Wait for exit, at most `limit` seconds, reporting progress meanwhile.
    Returns (exited, returncode)."""
    if limit is None and progress is None:
        return True, await process.wait()  # nothing to race the exit: no task group
    result: list[int | None] = []
    async with anyio.create_task_group() as tg:

        async def exit_() -> None:
            result.append(await process.wait())
            tg.cancel_scope.cancel()

        tg.start_soon(exit_)
        if progress is not None:
            tg.start_soon(_report, progress, spool, clock)
        if limit is not None:
            tg.start_soon(_deadline, clock, limit, tg.cancel_scope.cancel)
    return (True, result[0]) if result else (False, None)


class _Scan:
    """Searches the spool for a pattern as it grows, each byte once."""

    def __init__(self, spool: Spool, pattern: ClientPattern) -> None:
        self.spool = spool
        self.pattern = pattern
        self.scanned = 0
        self.pending = ""

    async def step(self) -> tuple[str | None, bool]:
        """(the match, whether everything written so far was scanned); off the event loop."""
        if self.spool.size() <= self.scanned:
            return None, True  # nothing new: not worth a trip to a worker thread
        return await anyio.to_thread.run_sync(self._step)

    def _step(self) -> tuple[str | None, bool]:
        self.pattern.renew()
        size = self.spool.size()
        budget = _SCAN_TRIP_BYTES
        for offset, data in self.spool.chunks(self.scanned, size):
            if offset != self.scanned:
                self.pending = ""  # the keeper freed what lay between: no line spans it
            self.scanned = offset + len(data)
            text = self.pending + clean_text(data)
            match = self.pattern.search(text)
            if match:
                return match.group(0), True
            self.pending = text.rsplit("\n", 1)[-1][-_PENDING_CHARS:]
            budget -= len(data)
            if budget <= 0:
                return None, self.scanned >= size
        # Read to `size` (or to a freed range reaching it): all of it was looked at.
        self.scanned = max(self.scanned, size)
        return None, True

    async def to_end(self) -> str | None:
        while True:
            match, done = await self.step()
            if match is not None or done:
                return match


class _Wakeup:
    """A flag one task waits on and others raise; a raise while nobody waits is kept."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def set(self) -> None:
        self._event.set()

    async def wait(self) -> None:
        await self._event.wait()
        self._event = anyio.Event()


@asynccontextmanager
async def _growth_of(spool: Spool, wanted: bool) -> AsyncIterator[Growth | None]:
    if not wanted:
        yield None
        return
    async with spool.growth() as growth:
        yield growth


async def wait_for_run(
    runs: RunSupervisor,
    run: RunRow,
    until: ClientPattern | None,
    limit: float,
    progress: Progress | None,
    clock: Clock,
) -> Waited:
    """Until `until` matches the run's output, the run ends, or `limit` seconds pass (on
    `clock`, which is why this is not `anyio.fail_after`).

    A run that already ended is searched once: a match is still `matched`, else its end is
    reported at once (`exited`). Output written before the end is searched before the end
    is reported.
    """
    spool = Spool(run.files.output)
    scan = _Scan(spool, until) if until is not None else None
    if run.state != "running":
        match = await scan.to_end() if scan else None
        return Waited("matched", match) if match is not None else Waited("exited", ended=run)
    outcome: list[Waited] = []
    ended = anyio.Event()
    ended_row: list[RunRow | None] = []
    wake = _Wakeup()
    # Watch before the first look, so no write between the two goes unnoticed.
    async with _growth_of(spool, scan is not None) as growth, anyio.create_task_group() as tg:

        def done(reason: WaitReason, match: str | None = None) -> None:
            if not outcome:
                outcome.append(Waited(reason, match, ended_row[0] if ended_row else None))
            tg.cancel_scope.cancel()

        async def end() -> None:
            ended_row.append(await runs.until_ended(run))
            ended.set()
            wake.set()

        async def grow(growth: Growth) -> None:
            while True:
                await growth.wait()
                wake.set()

        async def look() -> None:
            while True:
                finished = ended.is_set()
                match, scanned_all = await scan.step() if scan else (None, True)
                if match is not None:
                    return done("matched", match)
                if finished and scanned_all:
                    return done("exited")
                if scanned_all:
                    await wake.wait()

        tg.start_soon(end)
        if growth is not None:
            tg.start_soon(grow, growth)
        tg.start_soon(_deadline, clock, limit, lambda: done("timeout"))
        if progress is not None:
            tg.start_soon(_report, progress, spool, clock)
        tg.start_soon(look)
    return outcome[0]
