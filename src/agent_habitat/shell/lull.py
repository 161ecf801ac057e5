"""Lull: the moment no run is being answered, when what a run's end leaves to do is done.

A run's end leaves work nothing reads before its answer: the tab's next prestarted wrapper
(a fork, an exec and a cgroup move in a worker thread), the rewrite of its environment dump,
the removal of empty cgroups, the database's checkpoint (`in_thread`: a worker thread's, its
sync of the disk beside the other jobs). Done while a run is being answered, it takes the
core or the GIL from that answer: a worker thread in `subprocess.Popen` holds the GIL until
its child has exec'd (Python 3.11's vfork), which on a loaded machine is milliseconds the
event loop cannot run. An agent leaves seconds between its calls; the work waits for them,
in one task for all of it (a task and a timer each cost the loop a turn). Calls back to back
without a lull still get it done: it waits at most `_BOUND`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

__all__ = ["Lull"]

logger = logging.getLogger(__name__)

# The answer goes out in a few turns of the event loop after the run's service call returns.
_AFTER_ANSWER_SECONDS = 0.002
# The longest the work waits for a lull (calls back to back without one).
_BOUND = 1.0

Job = Callable[[], Awaitable[None]]


class Lull:
    """Counts the runs being answered, and does the jobs left for a lull (`later`)."""

    def __init__(self, task_group: TaskGroup) -> None:
        self._tg = task_group
        self._answering = 0
        self._quiet = anyio.Event()
        self._quiet.set()
        self._jobs: list[Job] = []
        self._draining = False
        self._threaded: set[Callable[[], object]] = set()

    @contextmanager
    def answer(self) -> Iterator[None]:
        """Around a run's service call, from its request to its result."""
        if self._answering == 0:
            self._quiet = anyio.Event()
        self._answering += 1
        try:
            yield
        finally:
            self._answering -= 1
            if self._answering == 0:
                self._quiet.set()

    def later(self, job: Job) -> None:
        """Run `job` in the next lull, after the jobs before it. Jobs run even while the
        shell closes (shielded): a closing shell leaves no dump and no empty group behind."""
        self._jobs.append(job)
        if not self._draining:
            self._draining = True
            self._tg.start_soon(self._drain)

    def later_after(self, seconds: float, job: Job) -> None:
        """`later`, once `seconds` have passed (at once when none)."""
        if seconds <= 0:
            self.later(job)
            return

        async def wait() -> None:
            await anyio.sleep(seconds)
            self.later(job)

        self._tg.start_soon(wait)

    def apart(self, job: Job) -> None:
        """Start `job` in a task of its own in the next lull, in its place among the jobs
        left for it: the jobs after it do not wait for it. For a job that waits long on
        something else (a worker thread's fork, exec and cgroup move: tens of milliseconds
        on a loaded machine), which would otherwise hold back the quick jobs behind it (a
        run's end, written to the database) until the next call paid for them."""

        async def start() -> None:
            self._tg.start_soon(self._shielded, job)

        self.later(start)

    @staticmethod
    async def _shielded(job: Job) -> None:
        with anyio.CancelScope(shield=True):
            try:
                await job()
            except Exception:  # boundary: as `_drain`'s jobs
                logger.exception("a job left for a lull failed")

    def in_thread(self, job: Callable[[], object]) -> None:
        """Run the blocking `job` in a worker thread from the next lull on, beside the jobs
        left for it (they do not wait for it: a sync of the disk takes milliseconds); not
        again while it still runs."""
        if job in self._threaded:
            return
        self._threaded.add(job)

        async def run() -> None:
            try:
                await anyio.to_thread.run_sync(job)
            finally:
                self._threaded.discard(job)

        async def start() -> None:
            self._tg.start_soon(run)

        self.later(start)

    async def wait(self) -> None:
        """Until no run has been answered for `_AFTER_ANSWER_SECONDS` (at most `_BOUND`)."""
        with anyio.move_on_after(_BOUND):
            while True:
                await self._quiet.wait()
                await anyio.sleep(_AFTER_ANSWER_SECONDS)
                if self._answering == 0:
                    return

    async def _drain(self) -> None:
        with anyio.CancelScope(shield=True):
            try:
                while self._jobs:
                    await self.wait()
                    jobs, self._jobs = self._jobs, []
                    for job in jobs:
                        try:
                            await job()
                        except Exception:  # boundary: one job's failure must not drop the rest
                            logger.exception("a job left for a lull failed")
            finally:
                self._draining = False
