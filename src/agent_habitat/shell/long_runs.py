"""Long runs yield the CPU to the host and its callers.

Issue 23 ("Under load"): with eight tabs printing flat out and twenty callers, py-spy showed
the host's event loop idle, and `/proc/PID/schedstat` showed its threads waiting in the
CPU's run queue behind the runs (about 50 ms per `shell_scene` against 4 ms of CPU). So a
run still going after `LONG_RUN_SECONDS` takes the shell's `long_run_nice`
(`proc.priority.make_background`); a quick command is over long before, at full priority.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from ..proc import ProcessRecord
from ..proc.spawner import Spawner

__all__ = ["LONG_RUN_SECONDS", "LongRuns"]

LONG_RUN_SECONDS = 0.5


class LongRuns:
    """Lowers the runs of one shell that outlast `LONG_RUN_SECONDS` (none when `nice` is 0)."""

    def __init__(self, spawner: Spawner, task_group: TaskGroup, nice: int) -> None:
        self._spawner = spawner
        self._tg = task_group
        self._nice = nice

    def started(
        self, record: ProcessRecord, live: Callable[[], bool], after: float = LONG_RUN_SECONDS
    ) -> None:
        """The run `record` names started (or was adopted: `after=0`); `live` says whether
        this process still watches it."""
        if self._nice > 0:
            self._tg.start_soon(self._lower, record, live, after)

    async def _lower(self, record: ProcessRecord, live: Callable[[], bool], after: float) -> None:
        await anyio.sleep(after)
        if live():
            await anyio.to_thread.run_sync(self._spawner.make_background, record, self._nice)
