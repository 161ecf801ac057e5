"""The edit verbs as a service: `write` and `edit`, confined, atomic, locked per path.

Calls on different files run in parallel; calls on the same file queue on its lock, so
two edits never interleave their read-modify-write. Each applied change publishes an
event (`file.written` / `file.edited`) and calls `on_change` at once, which is where the
verify runner marks affected epochs stale without waiting for the file watcher.
"""

from __future__ import annotations

import inspect
import logging
import os
import stat
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio

from ..errors import HabitatError, UsageError
from ..events import EventBus, EventKind
from ..regular import NotRegularFileError, open_regular
from .atomic import write_atomic
from .confine import confine
from .models import FileEditArgs, FileEditResult, FileWriteArgs, FileWriteResult, LineEndings
from .text import EditConflictError, apply_edits, decode_text, in_style, line_endings

__all__ = ["FileEditor", "OnChange"]

logger = logging.getLogger(__name__)

OnChange = Callable[[Sequence[Path]], Awaitable[None] | None]
"""Told the absolute paths a call changed, right after they are on disk."""


@dataclass(frozen=True)
class _Written:
    size: int
    style: LineEndings
    created: bool


class FileEditor:
    """`file_write` / `file_edit` for the project whose root `root()` returns."""

    def __init__(
        self,
        root: Callable[[], Path | None],
        bus: EventBus | None = None,
        on_change: OnChange | None = None,
    ) -> None:
        self._root = root
        self._bus = bus
        self.on_change = on_change
        """Settable after construction: the composition root plugs the verify runner in."""
        self._locks: dict[Path, anyio.Lock] = {}
        self._users: dict[Path, int] = {}

    async def write(self, args: FileWriteArgs) -> FileWriteResult:
        """Write the whole file (creating it and its folders); an existing file keeps its
        mode and line-ending style."""
        target, label = self._confine(args.path)
        async with self._locked(target):
            # Shielded: a cancelled request must not leave a written file unannounced.
            with anyio.CancelScope(shield=True):
                done = await anyio.to_thread.run_sync(_write_whole, target, label, args.content)
                await self._announce("file.written", target, label, done.size, created=done.created)
        return FileWriteResult(
            path=label, bytes=done.size, line_endings=done.style, created=done.created
        )

    async def edit(self, args: FileEditArgs) -> FileEditResult:
        """Apply every edit in order, or none (EditConflictError names the one that can't)."""
        target, label = self._confine(args.path)
        async with self._locked(target):
            with anyio.CancelScope(shield=True):
                done = await anyio.to_thread.run_sync(_edit_file, target, label, args)
                await self._announce("file.edited", target, label, done.size, edits=len(args.edits))
        return FileEditResult(
            path=label, bytes=done.size, line_endings=done.style, edits=len(args.edits)
        )

    def _confine(self, path: str) -> tuple[Path, str]:
        root = self._root()
        if root is None:
            raise UsageError("no project is open; open one with project_open first")
        return confine(root, path)

    @asynccontextmanager
    async def _locked(self, target: Path) -> AsyncIterator[None]:
        lock = self._locks.setdefault(target, anyio.Lock())
        self._users[target] = self._users.get(target, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[target] -= 1
            if not self._users[target]:
                del self._users[target], self._locks[target]

    async def _announce(
        self, kind: EventKind, target: Path, label: str, size: int, **extra: object
    ) -> None:
        if self._bus is not None:
            self._bus.publish(kind, data={"path": label, "bytes": size, **extra})
        if self.on_change is None:
            return
        try:
            outcome = self.on_change([target])
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:  # the file is written; a listener's bug must not turn that into an error
            logger.exception("on_change listener failed for %s", label)


@dataclass(frozen=True)
class _Existing:
    text: str
    mode: int
    data: bytes
    stamp: tuple[int, int, int, int]
    """Device, inode, size and mtime (ns) as read: a change by anyone else moves one."""


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _read_existing(target: Path, label: str) -> _Existing | None:
    try:
        # Never a plain open: a FIFO in the project would block this thread for good.
        with open_regular(target, label) as f:
            data = f.read()
            st = os.fstat(f.fileno())
    except FileNotFoundError:
        return None
    except NotRegularFileError:
        raise
    except OSError as exc:
        raise HabitatError(f"cannot read {label}: {exc.strerror}") from exc
    return _Existing(decode_text(data, label), stat.S_IMODE(st.st_mode), data, _stamp(st))


def _unchanged_since(target: Path, label: str, read: _Existing) -> Callable[[], None]:
    """A check, run just before the rename, that nobody wrote `target` since it was read."""

    def check() -> None:
        try:
            with open_regular(target, label) as f:
                now, st = f.read(), os.fstat(f.fileno())
        except (OSError, NotRegularFileError):
            now, st = None, None
        if st is None or _stamp(st) != read.stamp or now != read.data:
            raise EditConflictError(
                f"{label} changed while the edit was being applied (another process wrote "
                "it); nothing was written: read the file again and retry the edit"
            )

    return check


def _store(
    target: Path,
    label: str,
    text: str,
    mode: int | None,
    before_replace: Callable[[], None] | None = None,
) -> int:
    data = text.encode("utf-8")
    try:
        write_atomic(target, data, mode, before_replace)
    except OSError as exc:
        raise HabitatError(f"cannot write {label}: {exc.strerror}; the file is unchanged") from exc
    return len(data)


def _write_whole(target: Path, label: str, content: str) -> _Written:
    existing = _read_existing(target, label)
    if existing is None:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HabitatError(f"cannot create the folder of {label}: {exc.strerror}") from exc
        style = line_endings(content)
        return _Written(_store(target, label, content, None), style, created=True)
    style = line_endings(existing.text)
    return _Written(
        _store(target, label, in_style(content, style), existing.mode), style, created=False
    )


def _edit_file(target: Path, label: str, args: FileEditArgs) -> _Written:
    existing = _read_existing(target, label)
    if existing is None:
        raise UsageError(f"{label} does not exist; create it with file_write")
    new_text = apply_edits(existing.text, args.edits, label)
    # Another process may append meanwhile (the lock holds only this habitat's own calls):
    # its lines must not be lost to the rename.
    check = _unchanged_since(target, label, existing)
    size = _store(target, label, new_text, existing.mode, check)
    return _Written(size, line_endings(existing.text), created=False)
