"""Watching a cargo run's output as it comes, for work that starts on what it says: HEAD's
test build once the tests' own build finished (tests.py), HEAD's clippy check once the
tree's reported an error (cargo.py). The output is a file written as it comes (the run's
spool), read here for what was added since the last look."""

from __future__ import annotations

import contextlib
from pathlib import Path

import anyio

__all__ = ["BUILD_FINISHED", "ERROR", "said"]

BUILD_FINISHED = b'"reason":"build-finished"'
"""cargo's JSON once the build is over, before the first test binary runs."""
ERROR = b'"level":"error"'
"""A compiler message of an error (a denied lint's too) in cargo's JSON."""
LOOK_EVERY_S = 0.1


async def said(spool: Path, needle: bytes, ended: anyio.Event) -> bool:
    """True once the output at `spool` holds `needle`; False once `ended` is set first."""
    seen, tail = 0, b""
    while not ended.is_set():
        with contextlib.suppress(FileNotFoundError):
            with spool.open("rb") as f:
                f.seek(seen)
                added = f.read()
            seen += len(added)
            if needle in tail + added:
                return True
            tail = (tail + added)[-len(needle) :]
        with anyio.move_on_after(LOOK_EVERY_S):
            await ended.wait()
    return False
