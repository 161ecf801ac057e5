"""A spool file: what a supervised process printed, read in bounded pieces while it may
still be appending, and a way to notice that it grew.

Every read is bounded, so memory stays flat however much a command printed. A missing or
unreadable spool reads as empty: a process that never started printed nothing. Decoding is
the reader's business (the shell cleans ANSI and `\\r` overlays, verify parses raw text).
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio

__all__ = ["Growth", "Spool"]

# Where inotify is missing (macOS) or refused (the per-user instance limit), this is how
# often a `Growth` looks at the size instead.
_POLL_SECONDS = 0.05
# inotify(7): a change of the file's content, and its creation.
_IN_MODIFY = 0x002
_IN_CREATE = 0x100
_IN_MOVED_TO = 0x080


@dataclass(frozen=True)
class Spool:
    path: Path

    def size(self) -> int:
        try:
            return os.stat(self.path).st_size
        except OSError:
            return 0

    def read(self, start: int, length: int) -> bytes:
        """At most `length` bytes at offset `start`."""
        if length <= 0:
            return b""
        try:
            with open(self.path, "rb") as f:
                f.seek(max(0, start))
                return f.read(length)
        except OSError:
            return b""

    def head(self, length: int) -> bytes:
        return self.read(0, length)

    def tail(self, length: int) -> bytes:
        """The last `length` bytes (all of a smaller spool)."""
        size = self.size()
        return self.read(max(0, size - length), min(length, size))

    def lines(self, start: int = 0, max_line_bytes: int = 64 * 1024) -> Iterator[bytes]:
        """Lines from offset `start`, each with its newline; a longer line comes in pieces of
        `max_line_bytes`, so one huge line cannot fill memory."""
        try:
            f = open(self.path, "rb")
        except OSError:
            return
        with f:
            f.seek(max(0, start))
            yield from iter(lambda: f.readline(max_line_bytes), b"")

    @asynccontextmanager
    async def growth(self) -> AsyncIterator[Growth]:
        """Notice writes to the spool from here on (`await growth.wait()`)."""
        watch = _Inotify.open(self.path.parent)
        try:
            yield Growth(self, watch)
        finally:
            if watch is not None:
                watch.close()


class Growth:
    """Wakes its one waiter when the spool's folder changed; never misses a write made after
    it was opened (inotify queues events until they are read).

    inotify is used directly (a file descriptor the event loop waits on) rather than through
    watchfiles, whose watcher sleeps in 50 ms steps on a worker thread per watch: a wait
    would then cost a thread of the shared pool and still wake on a timer.
    """

    def __init__(self, spool: Spool, watch: _Inotify | None) -> None:
        self._spool = spool
        self._watch = watch
        self._seen = spool.size()

    async def wait(self) -> None:
        """Return once the spool may have grown since the last return (or since opening)."""
        if self._watch is not None:
            await self._watch.wait()
            return
        while self._spool.size() == self._seen:  # noqa: ASYNC110 - no inotify: polling is all there is
            await anyio.sleep(_POLL_SECONDS)
        self._seen = self._spool.size()


class _Inotify:
    """One inotify instance watching one folder; readiness of its fd means "something changed"."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def open(cls, folder: Path) -> _Inotify | None:
        libc = _libc()
        if libc is None:
            return None
        fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        if fd < 0:
            return None  # EMFILE: the user's instances are used up; fall back to polling
        mask = _IN_MODIFY | _IN_CREATE | _IN_MOVED_TO
        if libc.inotify_add_watch(fd, os.fsencode(folder), mask) < 0:
            os.close(fd)
            return None
        return cls(fd)

    async def wait(self) -> None:
        await anyio.wait_readable(self.fd)
        # The events only say that something changed; the size tells what. Drain them all.
        while True:
            try:
                if not os.read(self.fd, 64 * 1024):
                    return
            except BlockingIOError:
                return

    def close(self) -> None:
        anyio.notify_closing(self.fd)
        os.close(self.fd)


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):  # a libc without inotify
        return None
    return lib
