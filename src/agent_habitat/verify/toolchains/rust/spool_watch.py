"""Watching a cargo run's output as it comes, for work that starts on what it says: HEAD's
test build once the tests' own build succeeded (tests.py), the crates' own check once the
tree's clippy reported a compile error (lib_check.py). The output is a file written as it
comes (the run's spool), read here for what was added since the last look."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

__all__ = [
    "BUILD_FINISHED",
    "BUILD_SUCCEEDED",
    "LOOK_EVERY_S",
    "compile_error",
    "said",
    "said_line",
]

BUILD_SUCCEEDED = b'"reason":"build-finished","success":true'
"""cargo's JSON once the build is over and every unit built, before the first test binary
runs (a failed build says `"success":false`: no test of it will run)."""
BUILD_FINISHED = b'"reason":"build-finished"'
"""cargo's JSON once the build is over, whether or not every unit built."""
_ERROR = b'"level":"error"'
LOOK_EVERY_S = 0.1


def compile_error(line: bytes) -> bool:
    """A line of cargo's JSON that is a compiler error other than a lint only clippy has
    (rustc's own errors and the lints a crate denies)."""
    if _ERROR not in line:
        return False
    try:
        item: Any = json.loads(line)
    except ValueError:
        return False
    if not isinstance(item, dict) or item.get("reason") != "compiler-message":
        return False
    message = item.get("message") or {}
    code = str((message.get("code") or {}).get("code") or "")
    return message.get("level") == "error" and not code.startswith("clippy::")


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


async def said_line(spool: Path, wanted: Callable[[bytes], bool], ended: anyio.Event) -> bool:
    """True once a whole line of the output at `spool` is `wanted`; False once `ended` is
    set first."""
    seen, part = 0, b""
    while not ended.is_set():
        with contextlib.suppress(FileNotFoundError):
            with spool.open("rb") as f:
                f.seek(seen)
                added = f.read()
            seen += len(added)
            *lines, part = (part + added).split(b"\n")
            if any(wanted(line) for line in lines):
                return True
        with anyio.move_on_after(LOOK_EVERY_S):
            await ended.wait()
    return False
