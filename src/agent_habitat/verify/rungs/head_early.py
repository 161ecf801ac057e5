"""HEAD asked about the tree's failed tests while the tree's run goes on.

A red test run's failures are asked of HEAD's content (head_tests.py), and that run used to
begin only when the tree's run had ended: HEAD's export, a probe of the environment and a
pytest of the failed tests, 1-3 s on the verdict's path (humanize 4.9.0's 10 failures at
load 30). The recording plugin (`habitat_testdeps`) appends each failed test's node id to
a file as it fails (`HABITAT_TESTDEPS_FAILED`); `EarlyHead.follow` reads it while the run
goes on and asks HEAD about what it finds, one batch at a time (what fails meanwhile waits
for the next batch, so a run of many failures pays a few of HEAD's pytest starts, not one
each). When the tree's run ends, what is left is asked at once, beside a batch still
running. The answers go where `settle_tests` looks first (`remember_answers`), so it asks
HEAD only about what was not asked here: a key this run did not name as the tree's junit
report names it, a collection error (none is one test), or all of them when HEAD could not
answer here (then `settle_tests` asks again and says why).

What is kept are facts about HEAD's content, whatever the tree's run comes to: a run that
ends in a crash, or is cancelled, leaves only true answers behind.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from ..head import HeadTree
from .compare import head_of
from .context import RungContext
from .head_tests import HeadRun, not_known, remember_answers
from .pytest_head import failure_key

__all__ = ["FAILED_ENV", "EarlyHead"]

FAILED_ENV = "HABITAT_TESTDEPS_FAILED"
"""The file the plugin appends each failed test's node id to, a line each."""
_POLL_S = 0.05

Ask = Callable[[HeadTree, list[str], str, dict[str, str]], Awaitable[HeadRun | str]]
"""Runs tests on HEAD (`tests_on_head`): these keys, with a tag for its spool files and the
node id of each key."""


class EarlyHead:
    """Follows one test run's failures (`follow`, in a task beside the run) and asks HEAD
    about them; `ended()` when the run is over."""

    def __init__(self, ctx: RungContext, failed: Path, cache_key: str, ask: Ask) -> None:
        self.ctx = ctx
        self.failed = failed
        self.cache_key = cache_key
        self.ask = ask
        self.asked: list[str] = []
        """The keys HEAD was asked about here, answered or not (`settle_tests`' `asked_early`)."""
        self._seen: set[str] = set()
        self._nodeids: dict[str, str] = {}
        self._offset = 0
        self._ended = anyio.Event()
        self._busy = False
        self._gave_up = False
        self._batches = 0
        self._store = anyio.Lock()

    def ended(self) -> None:
        self._ended.set()

    def _new(self) -> list[str]:
        """Blocking: the keys of the failures appended since the last read (whole lines only),
        each once, as the junit report will name them (`failure_key`): what `settle_tests`
        asks HEAD about, and the test names HEAD's pytest is given."""
        try:
            with open(self.failed, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        self._offset += end
        out: list[str] = []
        for line in data[:end].decode("utf-8", "surrogateescape").splitlines():
            nodeid, _, file = line.rpartition("\t")
            key = failure_key(nodeid, file) if nodeid else None
            if key is not None and key not in self._seen:
                self._seen.add(key)
                self._nodeids[key] = nodeid
                out.append(key)
        return out

    async def follow(self) -> None:
        head: HeadTree | str | None = None
        waiting: list[str] = []
        async with anyio.create_task_group() as tg:
            while not self._gave_up:
                ended = self._ended.is_set()
                waiting += self._new()
                if waiting and head is None:
                    head = head_of(self.ctx)
                if isinstance(head, str):
                    return  # no HEAD to ask (`settle_tests` says why)
                if waiting and head is not None and (ended or not self._busy):
                    self._busy = True
                    tg.start_soon(self._batch, head, waiting)
                    waiting = []
                if ended:
                    return
                with anyio.move_on_after(_POLL_S):
                    await self._ended.wait()

    async def _batch(self, head: HeadTree, keys: list[str]) -> None:
        try:
            keys = await not_known(self.ctx, self.cache_key, keys)  # an earlier verify's
            if not keys:
                return
            self._batches += 1
            self.asked += keys
            ran = await self.ask(head, keys, f"-early{self._batches}", self._nodeids)
            if isinstance(ran, str):
                self._gave_up = True  # `settle_tests` asks again, and says why it could not
                return
            async with self._store:
                await remember_answers(self.ctx, self.cache_key, keys, ran)
        except Exception:  # asked again after the run, where what went wrong is reported
            # (git could not give HEAD's files, pytest did not start, the store not written):
            # `settle_tests` asks HEAD about what has no answer, as it did before this ran.
            self._gave_up = True
        finally:
            self._busy = False
