"""Lines that look like errors, from the part of a failed run's output the cap left out.

A build that prints 200 kB and fails has its verdict in the tail, and its error somewhere in
the middle, which the 16 KiB cap leaves out. Without help the agent's next call is always
`shell_last grep=error`; with the few lines that look like errors carried in the result, the
first call answers "what failed" (issue 13: a job takes no more calls than a peer that
returns all 200 kB). Only for runs that failed (a non-zero exit, a signal, a timeout): a
passing run's "error" lines are test names and log levels, noise. At most `LIMIT` lines,
each cut to `LINE_CHARS`, found in at most `SCAN_BYTES` of the left-out part; the count of
the others is said, and `shell_last grep` finds them all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..proc.spool import Spool
from .output import Capped, clean_text

__all__ = ["LIMIT", "ErrorLines", "failed", "find", "in_spool", "left_out"]

LIMIT = 10
LINE_CHARS = 300
SCAN_BYTES = 4 * 1024 * 1024
"""How much of the left-out part is searched (~25 ms a MiB): not a 256 MiB spool per result."""
_CHUNK = 1024 * 1024

# Compilers, linkers, test runners, interpreters, shells: the words their failures use.
_LOOKS = re.compile(
    r"\b(?:error|errors|fatal|failed|failure|failures|exception|traceback|panic|panicked"
    r"|segmentation fault|core dumped|undefined reference|not found|no such file)\b"
    r"|^E\s{2,}",  # pytest's assertion detail lines
    re.IGNORECASE | re.MULTILINE,
)
# Python's re is slow on a case-blind alternation (~0.4 s a MiB); on lowered text, a plain
# flat one finds the candidates at ~15 ms a MiB, and `_LOOKS` then judges each candidate's line.
_CANDIDATE = re.compile(
    r"error|exception|fatal|fail|traceback|panic|segmentation fault|core dumped"
    r"|undefined reference|not found|no such file|\ne  "
)
_NONE = re.compile(r"\b(?:0|no|zero|without) (?:errors?|failures?)\b", re.IGNORECASE)


@dataclass
class ErrorLines:
    lines: list[str] = field(default_factory=list)
    more: int = 0
    """Matching lines beyond `LIMIT` (counted in the scanned part)."""

    def add(self, text: str) -> None:
        # Lowered, behind a newline (so a first line can match `\ne  `): offset i here is i - 1
        # in `text`, as long as lowering kept the length (it does but for a few letters).
        lowered = "\n" + text.lower()
        if len(lowered) != len(text) + 1:
            lowered = "\n" + text
        end = 0
        for found in _CANDIDATE.finditer(lowered):
            at = found.start() - 1 + (lowered[found.start()] == "\n")
            if at < end:
                continue  # a second candidate on a line already judged
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            self._judge(text[start:end])

    def _judge(self, line: str) -> None:
        if _LOOKS.search(line) and not _NONE.search(line):
            if len(self.lines) < LIMIT:
                line = line.strip()
                self.lines.append(line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + "…")
            else:
                self.more += 1

    def then(self, other: ErrorLines) -> ErrorLines:
        """These lines, then `other`'s (the order they came in), within `LIMIT`."""
        both = [*self.lines, *other.lines]
        return ErrorLines(both[:LIMIT], self.more + other.more + max(0, len(both) - LIMIT))


def failed(state: str, exit_code: int | None, signal: int | None, timed_out: bool) -> bool:
    """Did the run end badly? (Still running: not yet, so no.)"""
    if state == "running":
        return False
    return timed_out or signal is not None or state != "exited" or exit_code not in (0, None)


def find(text: str) -> ErrorLines:
    found = ErrorLines()
    found.add(text)
    return found


def in_spool(spool: Spool, start: int, end: int, secrets: tuple[str, ...] | None) -> ErrorLines:
    """The error-looking lines of bytes `start`..`end` of `spool` (its kept part), in order."""
    found = ErrorLines()
    end = min(end, start + SCAN_BYTES)
    carry = b""
    at = start
    while at < end:
        data = carry + spool.read(at, min(_CHUNK, end - at))
        at += _CHUNK
        if not data:
            break
        cut = data.rfind(b"\n") + 1 if at < end else len(data)
        if cut == 0:  # one line longer than a chunk: look at it as it is
            cut = len(data)
        chunk, carry = data[:cut], data[cut:]
        found.add(clean_text(chunk, secrets))
    return found


def left_out(
    output: str,
    capped: Capped,
    state: str,
    exit_code: int | None,
    signal: int | None,
    timed_out: bool,
) -> ErrorLines:
    """The error-looking lines of what the cap left out of a run's `output` spool (the
    middle of `capped`), when the run failed; none otherwise."""
    start, end = capped.middle
    if end <= start or not failed(state, exit_code, signal, timed_out):
        return ErrorLines()
    return in_spool(Spool(output), start, end, None)
