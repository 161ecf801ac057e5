"""Waiting on a foreground run: timeout, yield, progress, cancellation."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from ..proc import Supervised
from .output import clean_text, spool_size

__all__ = ["PROGRESS_INTERVAL", "Progress", "WaitOutcome", "last_line", "wait_with_progress"]

Progress = Callable[[float, str], Awaitable[None]]
"""(elapsed seconds, last line of output) → None."""

# At most four progress reports a second (DESIGN §4).
PROGRESS_INTERVAL = 0.25


def last_line(path: Path, window: int = 4096) -> str:
    """The last non-empty line of the spool, cleaned."""
    size = spool_size(path)
    if size == 0:
        return ""
    with open(path, "rb") as f:
        f.seek(max(0, size - window))
        text = clean_text(f.read())
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()[:200]
    return ""


async def _report(progress: Progress, output: Path, started: float) -> None:
    while True:
        await anyio.sleep(PROGRESS_INTERVAL)
        await progress(round(time.monotonic() - started, 2), last_line(output))


WaitOutcome = tuple[bool, int | None]
"""(exited, returncode)."""


async def wait_with_progress(
    sup: Supervised, output: Path, limit: float | None, progress: Progress | None
) -> WaitOutcome:
    """Wait for exit, at most `limit` seconds, reporting progress meanwhile."""
    started = time.monotonic()
    result: list[int | None] = []
    with anyio.move_on_after(limit):
        async with anyio.create_task_group() as tg:
            if progress is not None:
                tg.start_soon(_report, progress, output, started)
            result.append(await sup.wait())
            tg.cancel_scope.cancel()
    return (True, result[0]) if result else (False, None)
