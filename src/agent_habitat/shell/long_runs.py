"""Long runs yield the CPU to the host and its callers; loud ones yield it further.

Issue 23 ("Under load"): with eight tabs printing flat out and twenty callers, py-spy showed
the host's event loop idle, and `/proc/PID/schedstat` showed its threads waiting in the
CPU's run queue behind the runs (about 50 ms per `shell_scene` against 4 ms of CPU). So a
run still going after `LONG_RUN_SECONDS` takes the shell's `long_run_nice`
(`proc.priority.make_background`); a quick command is over long before, at full priority.
A long run that then writes its output flat out (more than `LOUD_BYTES_PER_SECOND` over a
`LOUD_CHECK_SECONDS` look, far beyond what anyone reads) is a pump of output into a spool
that is cut to its budget anyway: it takes `LOUD_RUN_NICE`. At nice 5 eight such tabs
weighed 8 × 335 against the host's 1,024 and its callers' (sched(7)): the callers of
`scene_host_load` got under half a core on a quiet 2-core machine, and that was their p99.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from ..proc import ProcessRecord
from ..proc.spawner import Spawner

__all__ = ["LONG_RUN_SECONDS", "LOUD_BYTES_PER_SECOND", "LOUD_RUN_NICE", "LongRuns"]

LONG_RUN_SECONDS = 0.5
LOUD_BYTES_PER_SECOND = 4 << 20
"""Output faster than this, kept up over a look, marks a run as loud (a verbose build's log
is tens to hundreds of KiB a second; `yes`, `cat` of a big file or a runaway loop, MiB)."""
LOUD_CHECK_SECONDS = 1.0
LOUD_RUN_NICE = 15
"""The nice a loud run takes (weight 36 against nice 0's 1,024), never above what the
shell's `long_run_nice` already gave it; none where `long_run_nice` is 0."""


class LongRuns:
    """Lowers the runs of one shell that outlast `LONG_RUN_SECONDS` (none when `nice` is 0),
    and further those that then write their output flat out."""

    def __init__(self, spawner: Spawner, task_group: TaskGroup, nice: int) -> None:
        self._spawner = spawner
        self._tg = task_group
        self._nice = nice

    def started(
        self,
        record: ProcessRecord,
        live: Callable[[], bool],
        after: float = LONG_RUN_SECONDS,
        output: Path | None = None,
    ) -> None:
        """The run `record` names started (or was adopted: `after=0`); `live` says whether
        this process still watches it; `output`: its spool, looked at for a loud run."""
        if self._nice > 0:
            self._tg.start_soon(self._lower, record, live, after, output)

    async def _lower(
        self, record: ProcessRecord, live: Callable[[], bool], after: float, output: Path | None
    ) -> None:
        await anyio.sleep(after)
        if not live():
            return
        await anyio.to_thread.run_sync(self._spawner.make_background, record, self._nice)
        if output is None or self._nice >= LOUD_RUN_NICE:
            return
        # One stat a second while the run lives: the bytes written (a cut keeps the size).
        seen = _written(output)
        while True:
            await anyio.sleep(LOUD_CHECK_SECONDS)
            if not live():
                return
            now = _written(output)
            if now - seen > LOUD_BYTES_PER_SECOND * LOUD_CHECK_SECONDS:
                await anyio.to_thread.run_sync(self._spawner.make_background, record, LOUD_RUN_NICE)
                return
            seen = now


def _written(output: Path) -> int:
    try:
        return os.stat(output).st_size
    except OSError:
        return 0
