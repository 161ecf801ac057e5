"""Turning a spool file into text for the agent: capped, ANSI-free, progress lines collapsed.

The spool keeps the raw bytes; everything here reads a bounded window of it through
`proc.spool.Spool`, so memory stays flat however much a command prints.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..proc.spool import Hole, Spool, split_lines
from ..secrets import redact_text, secret_values
from .omitted import omitted_marker

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true
if TYPE_CHECKING:
    import regex

__all__ = [
    "INLINE_READ_BYTES",
    "SEARCH_BUDGET_SECONDS",
    "Capped",
    "ClientPattern",
    "clean_text",
    "compile_pattern",
    "last_line",
    "read_capped",
    "read_lines_inline",
    "read_lines_window",
]

# CSI (colours, cursor moves), OSC (titles, hyperlinks), and lone two-byte escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


_MAX_LINE_BYTES = 64 * 1024
INLINE_READ_BYTES = 256 * 1024
"""A read of a spool up to this size is done on the event loop, where its caller is: bytes in
the page cache cost microseconds (cleaning them about 2 ms a MiB), while a worker thread's
hand-off costs two wakeups (the worker's, then the loop's), and on a loaded machine each
wakeup waits milliseconds for a core (issue 23: 8 loud tabs, 20 callers)."""
_INLINE_LINES = 200
"""A line window read on the event loop asks for at most this many lines (each costs its
cleaning, however short)."""
# A scan looks whether its call was cancelled (the client gave up) at each block of lines and
# every this many lines within one.
_CANCEL_CHECK_LINES = 1024
SEARCH_BUDGET_SECONDS = 1.0
"""How long a client's regex may take in all, over one call's scan (`grep`) or one trip of a
wait's scan (`until`). A sane pattern needs microseconds a line; nested quantifiers such as
`(a|aa)+$` backtrack exponentially."""
_now = time.thread_time  # the seam a unit test replaces
"""The budget counts the searching thread's CPU time, not the wall: on a loaded machine a
thread can wait a second for a core, and a sane pattern on two characters was refused as
hopeless."""
_RETRIES = 4
"""How often a search the engine stopped at its (wall-clock) timeout is started again, with
twice the wall each time, when the thread spent less than half that time on a core: it waited
for the CPU, it was not backtracking. A hopeless pattern still spends its CPU budget."""
_SEARCH_CHARS_PER_SECOND = 5_000_000
"""Each search adds its text's share to the budget at this (slow) rate: a long scan of a big
spool with a sane pattern is not cut, while one hopeless line still costs one budget."""


def clean_text(raw: bytes, secrets: tuple[str, ...] | None = None) -> str:
    """Decode, strip ANSI escapes, keep only the last `\\r`-overwritten state of each line,
    and show `secrets` (default: those of this process's environment) as `***`."""
    text = raw.decode("utf-8", errors="replace")
    text = _ANSI.sub("", text)
    text = redact_text(text, secret_values() if secrets is None else secrets)
    text = text.replace("\r\n", "\n")
    if "\r" in text:
        # A progress bar rewrites its line with \r; show what a terminal would show.
        text = "\n".join(_overlay(line) if "\r" in line else line for line in text.split("\n"))
    return text


def _overlay(line: str) -> str:
    """Each `\r` returns to column 0 and the next segment overwrites what is there."""
    shown = ""
    for segment in line.split("\r"):
        shown = segment + shown[len(segment) :]
    return shown


@dataclass(frozen=True)
class Capped:
    text: str
    omitted_bytes: int
    total_bytes: int
    """Size of the spool (the cursor for the next `since` read)."""
    middle: tuple[int, int] = (0, 0)
    """The spool's byte range left out between head and tail (empty when nothing was)."""


# How near (a fraction of each half) a line boundary must be for the head/tail cut to move to it.
_NEAR_LINE_FRACTION = 8


def read_capped(
    path: Path | str, cap: int, since: int = 0, secrets: tuple[str, ...] | None = None
) -> Capped:
    """Bytes `since`..end of the spool, as head + tail within `cap` bytes (`secrets`: the
    values to show as `***`, default those of this process's environment)."""
    spool = Spool(path)
    total = spool.size()
    start = min(since, total)
    hole = spool.hole()
    if hole is not None and (hole.end <= start or hole.start >= total):
        hole = None
    freed = 0 if hole is None else min(hole.end, total) - max(hole.start, start)
    kept = total - start - freed
    if secrets is None:
        secrets = secret_values()
    if kept <= cap:
        data = spool.read(start, total - start, hole, hole_read=True)
        if hole is None:
            return Capped(clean_text(data, secrets), 0, total)
        cut = max(0, hole.start - start)
        return Capped(
            clean_text(data[:cut], secrets)
            + _marker(freed, freed, hole)
            + clean_text(data[cut:], secrets),
            freed,
            total,
        )
    half = cap // 2
    if hole is not None and hole.start > start:
        # The head comes from before the freed range, the tail from after it.
        head = spool.read(start, min(half, hole.start - start))
        tail_length = min(cap - len(head), total - hole.end)
    else:
        head = spool.read(start, half)
        tail_length = cap - half
    tail = spool.read(total - tail_length, tail_length)
    # Cut at a line boundary when one is near, so neither part starts or ends mid-line.
    near = max(1, half // _NEAR_LINE_FRACTION)
    cut = head.rfind(b"\n", len(head) - near)
    if cut >= 0:
        head = head[: cut + 1]
    cut = tail.find(b"\n", 0, near)
    if 0 <= cut < len(tail) - 1:
        tail = tail[cut + 1 :]
    omitted = total - start - len(head) - len(tail)
    marker = _marker(omitted, freed, hole)
    text = clean_text(head, secrets) + marker + clean_text(tail, secrets)
    return Capped(text, omitted, total, (start + len(head), total - len(tail)))


def _marker(omitted: int, freed: int, hole: Hole | None) -> str:
    if hole is None:
        return omitted_marker(omitted)
    return omitted_marker(omitted, freed, hole.reason)


def read_lines_window(
    path: Path,
    cap: int,
    *,
    since: int = 0,
    head_lines: int | None = None,
    tail_lines: int | None = None,
    grep: ClientPattern | None = None,
) -> Capped:
    """Line-oriented reads (`head_lines`, `tail_lines`, `grep`), streamed and capped.

    `head_lines` reads from the start only as far as it needs, `tail_lines` from the end,
    `grep` alone until its matches fill the cap. `omitted_bytes` counts every byte of the
    range not shown. Blocking: run it in a worker thread, where it stops early when its
    call is cancelled."""
    return _read_window(path, cap, since, head_lines, tail_lines, grep, None)


def read_lines_inline(
    path: Path, cap: int, *, since: int = 0, head_lines: int | None, tail_lines: int | None
) -> Capped | None:
    """`read_lines_window` without a pattern, on the caller's thread, when it asks for a
    few lines (`_INLINE_LINES`) and needs to read no more than `INLINE_READ_BYTES` of the
    spool; None otherwise (then run `read_lines_window` in a worker thread). A pattern always
    goes to a worker: its search may take its whole budget on one short line."""
    lines = (head_lines or 0) + (tail_lines or 0)
    if lines == 0 or lines > _INLINE_LINES:
        return None
    try:
        return _read_window(path, cap, since, head_lines, tail_lines, None, INLINE_READ_BYTES)
    except _OverBudget:
        return None


class _OverBudget(Exception):
    pass


def _read_window(
    path: Path,
    cap: int,
    since: int,
    head_lines: int | None,
    tail_lines: int | None,
    grep: ClientPattern | None,
    budget: int | None,
) -> Capped:
    spool = Spool(path)
    total = spool.size()
    start = min(since, total)
    window = _Window(cap, grep, budget)
    head_end = start
    if head_lines is not None or tail_lines is None:
        blocks = spool.blocks(start, _MAX_LINE_BYTES, total)
        head_end = window.fill(blocks, head_lines, window.head, start)
    if tail_lines is not None:
        window.fill(spool.blocks_backward(head_end, _MAX_LINE_BYTES), tail_lines, window.tail)
    text = "".join(window.head) + "".join(reversed(window.tail))
    return Capped(text, total - start - window.shown, total)


class _Window:
    """The lines a line window keeps: the head's and the tail's, within the cap."""

    def __init__(self, cap: int, grep: ClientPattern | None, budget: int | None = None) -> None:
        self.cap = cap
        self.grep = grep
        self.budget = budget
        """Bytes the window may read in all (None: no bound); `_OverBudget` past it."""
        self.secrets = secret_values()
        self.head: list[str] = []
        self.tail: list[str] = []
        self._kept: dict[int, int] = {}
        self.shown = 0
        """Raw bytes of the lines kept."""
        self.capped = False

    def fill(
        self,
        blocks: Iterator[tuple[int, bytes]],
        limit: int | None,
        into: list[str],
        start: int = 0,
    ) -> int:
        """Take lines from `blocks` (read forward into the head, backward into the tail)
        until `limit` or the cap; returns where a forward read stopped."""
        forward = into is self.head
        end = start
        for offset, block in blocks:
            _check_cancelled()
            if self.budget is not None:
                self.budget -= len(block)
                if self.budget < 0:
                    raise _OverBudget
            end = offset + len(block)
            if self.skip(block):
                continue
            if forward:
                lines = split_lines(offset, block, _MAX_LINE_BYTES)
            else:
                lines = _lines_backward(offset, block, _MAX_LINE_BYTES)
            for number, (line_at, raw) in enumerate(lines):
                if self.full(limit, into):
                    break
                if number % _CANCEL_CHECK_LINES == _CANCEL_CHECK_LINES - 1:
                    _check_cancelled()
                end = line_at + len(raw)
                self.take(raw, into)
            if self.full(limit, into):
                break
        return end

    def full(self, limit: int | None, into: list[str]) -> bool:
        return self.capped or (limit is not None and len(into) >= limit)

    def skip(self, block: bytes) -> bool:
        """Whether no line of `block` can match (one search for many lines)."""
        return self.grep is not None and not self.grep.may_match_lines(
            clean_text(block, self.secrets)
        )

    def take(self, raw: bytes, into: list[str]) -> None:
        line = clean_text(raw, self.secrets)
        if self.grep is not None and not self.grep.search(line):
            return
        kept = self._kept.get(id(into), 0)
        if kept + len(line) > self.cap:
            self.capped = True
            return
        into.append(line)
        self._kept[id(into)] = kept + len(line)
        self.shown += len(raw)


def _lines_backward(offset: int, block: bytes, max_line_bytes: int) -> Iterator[tuple[int, bytes]]:
    """`split_lines`'s (offset, line) pairs, last first, found from the end: a tail of 20
    lines splits 20 lines, not the whole block (a 256 KiB block of `yes` is 131,072 lines;
    splitting them all cost a loaded host seconds a call)."""
    end = len(block)
    while end > 0:
        start = block.rfind(b"\n", 0, end - 1) + 1
        # A long line comes in pieces cut from its start, as `split_lines` cuts it.
        for at in reversed(range(start, end, max_line_bytes)):
            yield offset + at, block[at : min(at + max_line_bytes, end)]
        end = start


def _check_cancelled() -> None:
    import anyio.from_thread  # here: a capped read in a process with no event loop (the
    # CLI's `habitat last` with no host, `shell.quiet_reads`) has no use for anyio

    try:
        anyio.from_thread.check_cancelled()
    except RuntimeError:
        return  # not in a worker thread of anyio's: nobody to cancel us


_WHOLE_TEXT = re.compile(r"\\[AZz]|\(\?<?[=!]")


class ClientPattern:
    """A regex from a client, searched within `SEARCH_BUDGET_SECONDS` in all per scan (and
    a linear share of the text searched).

    The `regex` engine (not `re`) because it can stop a search at a timeout and releases
    the GIL while it searches, so the event loop goes on meanwhile. The budget is shared by
    every search of a scan (a block's search, then its lines'), so a hopeless pattern costs
    one budget, not one per search; over it, a UsageError names the argument.
    """

    def __init__(self, pattern: str, argument: str) -> None:
        # Here, not with the module: only a call with a pattern needs the engine, and a
        # one-shot `habitat run` would load it for nothing.
        import regex

        self.pattern = pattern
        self.argument = argument
        self._left = SEARCH_BUDGET_SECONDS
        try:
            self._compiled = regex.compile(pattern)
            # Searching many lines at once finds a match where one line alone would, unless
            # the pattern anchors to the whole text or looks around (across a newline).
            self._lines = (
                None if _WHOLE_TEXT.search(pattern) else regex.compile(pattern, regex.MULTILINE)
            )
        except (regex.error, OverflowError, RecursionError) as exc:
            raise UsageError(f"argument `{argument}`: bad regex {pattern!r}: {exc}") from exc

    def renew(self) -> None:
        """A new scan (the next trip of a wait): the whole budget again."""
        self._left = SEARCH_BUDGET_SECONDS

    def may_match_lines(self, text: str) -> bool:
        """False only when no line of `text` (lines joined) can match."""
        if self._lines is None:
            return True
        try:
            found = self._timed(self._lines, text)
        except TimeoutError:
            return True  # let the line-by-line search decide (and name a hopeless pattern)
        return found is not None

    def search(self, text: str) -> regex.Match[str] | None:
        try:
            return self._timed(self._compiled, text)
        except TimeoutError:
            raise UsageError(
                f"argument `{self.argument}`: the regex {self.pattern!r} took over "
                f"{SEARCH_BUDGET_SECONDS:g} s on the output (last searched: {len(text)} "
                "characters) and was stopped; simplify it (nested quantifiers such as "
                "`(a+)+` or `(a|aa)+` backtrack exponentially)"
            ) from None

    def _timed(self, compiled: regex.Pattern[str], text: str) -> regex.Match[str] | None:
        self._left += len(text) / _SEARCH_CHARS_PER_SECOND
        for attempt in range(_RETRIES + 1):
            if self._left <= 0:
                raise TimeoutError
            wall = self._left * 2**attempt
            started = _now()
            try:
                return compiled.search(text, timeout=wall, concurrent=True)
            except TimeoutError:
                if _now() - started >= wall / 2 or attempt == _RETRIES:
                    raise
            finally:
                self._left -= _now() - started
        raise AssertionError("unreachable: the last attempt returns or raises")


def compile_pattern(pattern: str | None, argument: str) -> ClientPattern | None:
    """A user's regex (`grep`, `until`); a bad one is a UsageError naming the argument."""
    if pattern is None:
        return None
    return ClientPattern(pattern, argument)


def last_line(path: Path | str, window: int = 4096) -> str:
    """The last non-empty line of the spool, cleaned (what a progress report shows)."""
    text = clean_text(Spool(path).tail(window))
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()[:200]
    return ""
