"""HEAD's run of a scoped run's failed tests, started as soon as a test file ends with
failures, beside the rest of the tree's run rather than after it (issue 27).

A red scoped run's failures are compared with the same tests on HEAD (head_tests.py): a
cold runner in HEAD's export runs the failed tests. After the tree's run, that was the
critical path of every red first verify measured (cron-parser 5.10.0: 40 of its 87 s). The
warm jest tells each test file that ends with failed tests, and their full names, as it
reports the file (failed_stream.cjs, beside the project's own reporters, to a stream file):
`Ahead.watch` reads the stream while the tree's run goes on and, at the first such file,
runs those tests on HEAD (the same run head_tests.py makes, so the same results). A test
HEAD's runs at this HEAD already answered is not asked again.

When the tree's run ends, a green run stops HEAD's (its answer is not needed), a red one
waits for it and hands its results to `settle_tests`, which asks HEAD only about the
failures they do not answer (a file told after HEAD's run began, a failure in a file that
did not load). A test HEAD's run was asked about and did not run is one HEAD does not have:
new, as `settle_tests` counts it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.to_thread

from ...head import HeadTree
from ...rungs.compare import head_of
from ...rungs.context import RungContext
from ...rungs.head_tests import HeadRun, known_on_head
from ...tracebacks import relative

__all__ = ["JEST_STREAM", "Ahead"]

JEST_STREAM = Path(__file__).with_name("failed_stream.cjs")
_POLL_S = 0.2
"""How often the stream is read while the tree's run goes on (a line is a file's failures)."""

RunKeys = Callable[[HeadTree, list[str]], Awaitable[HeadRun | str]]


class Ahead:
    """HEAD's run of the failed tests the stream tells, started at the first (see the module)."""

    def __init__(self, ctx: RungContext, stream: Path, cache_key: str, run_keys: RunKeys):
        self.ctx = ctx
        self.stream = stream
        self.cache_key = cache_key
        self.run_keys = run_keys
        self.keys: list[str] = []
        """The failed tests' keys (`file > full name`) HEAD's run was asked, once it began."""
        self.ran: HeadRun | str | None = None

    @property
    def began(self) -> bool:
        return bool(self.keys)

    def _told(self, skip: frozenset[str]) -> list[str]:
        try:
            text = self.stream.read_text(encoding="utf-8")
        except OSError:
            return []
        keys: list[str] = []
        for line in text.splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue  # a line being written: read again at the next poll
            if not isinstance(item, dict) or not isinstance(item.get("names"), list):
                continue
            rel = relative(str(item.get("file", "")), self.ctx.root)
            if not rel or rel.startswith(("/", "..")):
                continue
            for name in item["names"]:
                key = f"{rel} > {name}"
                if key not in skip and key not in keys:
                    keys.append(key)
        return keys

    async def watch(self) -> None:
        """Wait for the first failures told, then run them on HEAD (cancelled when the
        tree's run ends without needing it)."""
        head = head_of(self.ctx)
        if isinstance(head, str):
            return
        known = await known_on_head(self.ctx, self.cache_key)
        if known is None:
            return  # every test of the command is known at this HEAD
        while True:  # a file the runner appends to: no event to wait on
            keys = await anyio.to_thread.run_sync(self._told, known)
            if keys:
                break
            await anyio.sleep(_POLL_S)
        self.keys = keys
        try:
            self.ran = await self.run_keys(head, keys)
        except OSError as exc:  # git could not give HEAD's files, or the tool did not start
            self.ran = str(exc)

    def head_run(self) -> HeadRun | None:
        """HEAD's outcomes for `settle_tests`, each asked key HEAD's run did not report at 0
        (a test HEAD does not have); None when HEAD's run did not answer (settle_tests asks
        HEAD itself then)."""
        if not isinstance(self.ran, HeadRun):
            return None
        failed = Counter(self.ran.failed)
        for key in self.keys:
            failed.setdefault(key, 0)
        return HeadRun(failed=failed, whole=self.ran.whole)

    def note(self) -> str | None:
        if not self.began:
            return None
        said = "answered" if isinstance(self.ran, HeadRun) else f"failed ({self.ran})"
        return (
            f"node: HEAD's run of {len(self.keys)} failed test(s) started when their file "
            f"ended, beside the rest of the run, and {said}"
        )
