"""SpoolKeeping: which runs get a spool keeper (proc/keepers.py) and when it starts.

A keeper holds a run's spool to its budget. On a disk too short for a late keeper it
starts before the command and pumps the command's output (`pipe`); otherwise it starts
only for a run still writing a moment after its start (`keep`), since a keeper costs an
interpreter's start and a quick `echo` is over before then. A spawner whose processes
write no real spool (`Spawner.keeps_spools` false, a test's fake) gets no keeper.
"""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from ..config import ShellConfig
from ..proc.keepers import (
    KEEPER_AFTER_SECONDS,
    keeper_alive,
    keeper_before,
    pump_needed,
    start_keeper,
)
from ..proc.spawner import Spawner
from ..proc.spool import Spool
from ..proc.spool_keeper import Budget
from . import leftovers
from .run_folders import remove
from .run_store import RunRow, RunStore

__all__ = ["SpoolKeeping"]

logger = logging.getLogger(__name__)

# The folders of runs trimmed from history are removed this many at a time, in one worker
# thread once the run that trimmed the last of them has answered, and the rest at close: a
# worker's wakeup for each run, before it started, cost it milliseconds on a loaded machine.
_DISCARDED_PER_REMOVAL = 16
_AFTER_ANSWER_SECONDS = 0.002


class SpoolKeeping:
    """Starts the keepers of one shell's runs, in its task group."""

    def __init__(
        self, store: RunStore, config: ShellConfig, spawner: Spawner, task_group: TaskGroup
    ) -> None:
        self._store = store
        self._config = config
        self._enabled = spawner.keeps_spools
        self._tg = task_group
        self._discarded: list[Path] = []

    def discard(self, folders: list[Path]) -> None:
        """Remove these run folders (runs trimmed from history, no longer in the database)."""
        self._discarded += folders
        if len(self._discarded) >= _DISCARDED_PER_REMOVAL:
            self._tg.start_soon(self._remove_later, self._discarded)
            self._discarded = []

    async def _remove_later(self, folders: list[Path]) -> None:
        with anyio.CancelScope(shield=True):  # a closing shell still removes them
            await anyio.sleep(_AFTER_ANSWER_SECONDS)
            await anyio.to_thread.run_sync(remove, folders)

    def close(self) -> None:
        """Remove the discarded folders not removed yet (the shell is closing)."""
        remove(self._discarded)
        self._discarded = []

    def _budget(self) -> Budget:
        return Budget(
            self._config.spool_run_budget_bytes, self._config.spool_workspace_budget_bytes
        )

    async def pipe(self, run: RunRow) -> int | None:
        """On a disk too short for a late keeper, the keeper starts before the command and
        pumps its output into the spool: the pipe's write end for the command's output
        (the caller closes it once the command holds its own); None otherwise."""
        budget = self._budget()
        if not self._enabled or not pump_needed(run.files.output, budget):
            return None  # the common case, without a hop to a worker thread
        try:
            return await anyio.to_thread.run_sync(keeper_before, run.files.output, budget)
        except OSError as exc:  # the run goes on; a keeper may still start after it
            logger.warning("no spool keeper before %s: %s", run.files.output, exc)
            return None

    def pumps(self, spool_dir: Path) -> bool:
        """Whether a run in `spool_dir` would start behind a pump now (`pipe`)."""
        return self._enabled and pump_needed(spool_dir / "run-0" / "output", self._budget())

    def adopted(self, run: RunRow) -> None:
        """A running run found at open: its shell may have died between the spawn and the
        keeper's start, so one starts now if none is alive."""
        if self._enabled and not keeper_alive(run.files.output):
            self.keep(run, at_once=True)

    def keep(self, run: RunRow, *, at_once: bool = False) -> None:
        """Start a keeper for `run` if it is still writing a moment from now (or at once)."""
        if self._enabled:
            self._tg.start_soon(self._keep_later, run, at_once)

    async def _keep_later(self, run: RunRow, at_once: bool) -> None:
        """A keeper costs an interpreter's start (measured in bench/latency/run_latency.py), so it
        starts only for a run still writing a moment after its start: a quick `echo` is
        over before then. A writer at 1 GB/s puts ~50 MB in the spool meanwhile, which a
        disk with the room to start keepers late has (else `pipe` started one)."""
        try:
            if not at_once:
                await anyio.sleep(KEEPER_AFTER_SECONDS)
        finally:
            # Even when this shell closes meanwhile: its run goes on writing without it.
            with anyio.CancelScope(shield=True):
                if self._still_writing(run):
                    await self._launch(run)

    def settled(self, run: RunRow) -> None:
        """`keep` for a run whose end was recorded before its keeper's moment (it got no
        `keep`): a keeper starts at once only if something of it may still write its spool."""
        if self._enabled and self._written_on(run):
            self.keep(run, at_once=True)

    def _still_writing(self, run: RunRow) -> bool:
        """Whether anything of `run` may still write its spool (or it is over budget)."""
        row = self._store.get(run.id)
        if row is None:
            return False  # the tab was closed and its folder removed
        return row.state == "running" or self._written_on(run)

    def _written_on(self, run: RunRow) -> bool:
        """Whether what an ended `run` left running may write its spool, or it is over
        half its budget."""
        if leftovers.read(run.run_dir):
            return True
        return Spool(run.files.output).size() > self._config.spool_run_budget_bytes // 2

    async def _launch(self, run: RunRow) -> None:
        # Starting a process takes milliseconds (tens on a busy machine): not on the loop.
        # Should this shell die before it starts, the next one to adopt the run starts it.
        await anyio.to_thread.run_sync(_start_keeper, run.files.output, self._budget())


def _start_keeper(output: Path, budget: Budget) -> None:
    try:
        start_keeper(output, budget)
    except OSError as exc:  # the run goes on; its output is not held to the budget
        logger.warning("no spool keeper for %s: %s", output, exc)
