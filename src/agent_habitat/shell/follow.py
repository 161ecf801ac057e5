"""Following a run from its start to its answer: a foreground run's end, limit or yield; a
background run's watcher; and what a run still going a moment after its start gets.

A run still going `QUICK_SECONDS` after its start gets its spool keeper (if it still
writes), its identity recorded (a cold start's create time) and, later, the long-run nice
(`long_runs`). Most commands an agent runs are over by then: a foreground run without
progress reports waits that moment for its own exit first, so a quick one needs none of it
(no task, no timer: each costs the event loop a turn inside some later call) and only
looks, at its end, whether something it left may still write its spool.
"""

from __future__ import annotations

import functools

import anyio
from anyio.abc import TaskGroup

from ..clock import Clock
from ..proc.keepers import KEEPER_AFTER_SECONDS
from ..proc.spawner import ProcessHandle
from ..proc.spool import Spool
from . import views
from .long_runs import LONG_RUN_SECONDS
from .models import RunResult
from .run_store import RunRow
from .spool_keeping import SpoolKeeping
from .supervisor import RunSupervisor
from .tabs import Tabs
from .waiting import Progress, wait_with_progress

__all__ = ["QUICK_SECONDS", "Follower"]

QUICK_SECONDS = KEEPER_AFTER_SECONDS
"""A run over before this is quick: it gets no keeper, no identity, no lowering."""


class Follower:
    """Follows the runs of one shell (`Shell.run`'s second half)."""

    def __init__(
        self,
        tabs: Tabs,
        runs: RunSupervisor,
        keeping: SpoolKeeping,
        clock: Clock,
        task_group: TaskGroup,
    ) -> None:
        self._tabs = tabs
        self._runs = runs
        self._keeping = keeping
        self._clock = clock
        self._tg = task_group

    @staticmethod
    def waits_quick(background: bool, progress: Progress | None) -> bool:
        """Whether `follow` first waits `QUICK_SECONDS` for the run's end (then the caller
        leaves `going` to it), rather than the run getting it at its start."""
        return not background and progress is None

    def going(self, run: RunRow, process: ProcessHandle, *, after: float = 0.0) -> None:
        """The run may go on past its first moment (`after` seconds ago): its keeper if it
        still writes (unless one pumps it), its lowering once it is long."""
        if run.id not in self._runs.pumped:
            self._keeping.keep(run, at_once=after > 0)
        self._runs.lower_later(run, process, max(0.0, LONG_RUN_SECONDS - after))

    async def follow(
        self,
        run: RunRow,
        process: ProcessHandle,
        background: bool,
        time_limit: float | None,
        yield_after: float | None,
        progress: Progress | None,
        *,
        quick: float = QUICK_SECONDS,
    ) -> RunResult:
        """The run's answer. `quick`: what is left of its first moment (a run started by
        `shell.quiet_run` spent the rest of it there)."""
        if background:
            await self._runs.identify(run, process)
            self._runs.watch(run, process)
            return views.run_result(self._tabs, run)
        limit = yield_after if yield_after is not None else time_limit
        if yield_after is not None and time_limit is not None:
            limit = min(yield_after, time_limit)
        if self.waits_quick(background, progress):
            started = self._clock.monotonic()
            pumped = run.id in self._runs.pumped  # its keeper started before it
            returncode = await self._quick_end(run, process, limit, quick)
            if returncode is not None:
                # Its end is written after its answer (when it ended alone), and the look
                # at what it left writing its spool after that.
                ended, alone = await self._runs.ended_quick(run, returncode[0])
                if not pumped:
                    self._runs.after_end(functools.partial(self._keeping.settled, ended))
                return views.run_result(self._tabs, ended, alone=alone)
            self._runs.announce(run.id)  # not over within its first moment
            self.going(run, process, after=QUICK_SECONDS)
            if not process.record.create_time:
                self._tg.start_soon(self._runs.identify, run, process)
            if limit is not None:  # as the shell's clock counts (a test's may stand still)
                limit = max(0.0, limit - (self._clock.monotonic() - started))
        elif not process.record.create_time:
            # A quick command ends before it needs an identity; a long one gets it soon after.
            self._tg.start_soon(self._runs.identify_later, run, process)
        try:
            exited, returncode_ = await wait_with_progress(
                process, Spool(run.files.output), limit, progress, self._clock
            )
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._runs.kill(run, "cancelled")
            raise
        if exited:
            return views.run_result(self._tabs, await self._runs.ended(run, returncode_))
        if yield_after is not None and (time_limit is None or yield_after < time_limit):
            await self._runs.identify(run, process)
            self._runs.watch(run, process)
            return views.run_result(self._tabs, run)
        await self._runs.kill(run, "timed_out")
        return views.run_result(self._tabs, self._runs.store.get(run.id) or run)

    async def _quick_end(
        self, run: RunRow, process: ProcessHandle, limit: float | None, quick: float
    ) -> tuple[int | None] | None:
        """The run's return code, boxed, if it ends within `QUICK_SECONDS` (real time, as
        the keeper's moment is) and before `limit` by the shell's clock; else None."""
        if limit is not None and limit <= QUICK_SECONDS:
            return None  # its limit comes first: the full wait watches it
        if quick <= 0:
            return None  # it went on past its first moment (`shell.quiet_run` saw it)
        try:
            with anyio.move_on_after(quick):
                return (await process.wait(),)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._runs.kill(run, "cancelled")
            raise
        return None
