"""A spool file: what a supervised process printed, read in bounded pieces while it may
still be appending, and a way to notice that it grew.

Every read is bounded, so memory stays flat however much a command printed. A missing or
unreadable spool reads as empty: a process that never started printed nothing. Decoding is
the reader's business (the shell cleans ANSI and `\\r` overlays, verify parses raw text).
"""

from __future__ import annotations

import os
import sys

# anyio is imported by the waits that need it: the CLI copies a spool to the terminal with
# no event loop, and must not pay for importing one.
from .spool_hole import Hole, read_hole

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true
if TYPE_CHECKING:
    import ctypes
    from collections.abc import Iterator
    from pathlib import Path

# The most one `os.pread` asks for (a capped read asks for at most a few hundred kB).
_PREAD_BYTES = 1 << 20

__all__ = ["Growth", "Hole", "Spool", "split_lines"]

# Where inotify is missing (macOS) or refused (the per-user instance limit), this is how
# often a `Growth` looks at the size instead.
_POLL_SECONDS = 0.05
# inotify(7): a change of the file's content, and its creation.
_IN_MODIFY = 0x002
_IN_CREATE = 0x100
_IN_MOVED_TO = 0x080
# A read retried when the keeper freed more of the spool while it read (rare, and each
# retry sees a bigger hole, so the reads converge).
_STABLE_TRIES = 3
_CHUNK_BYTES = 256 * 1024
_FIRST_BACKWARD_BYTES = 16 * 1024
"""A read from the end starts this small and doubles up to `_CHUNK_BYTES`: a tail of a few
lines needs a few hundred bytes, and each 256 KiB piece cost a page-faulted buffer (about
0.25 ms of a host's CPU per `shell_last` with `tail_lines`)."""


# A plain class, not a dataclass: the CLI copies a run's spool to the terminal through it,
# and `dataclasses` imports `inspect` (with `ast` and `dis`), more than the copy costs.
class Spool:
    """A run's spool file at `path` (immutable; equal to another of the same path)."""

    __slots__ = ("path",)
    path: Path | str
    """A Path, or the path's text (the CLI's light path has no `pathlib`)."""

    def __init__(self, path: Path | str) -> None:
        object.__setattr__(self, "path", path)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Spool is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        return type(other) is Spool and other.path == self.path

    def __hash__(self) -> int:
        return hash((Spool, self.path))

    def __repr__(self) -> str:
        return f"Spool(path={self.path!r})"

    def size(self) -> int:
        """Bytes written so far (the logical size: a freed middle still counts)."""
        try:
            return os.stat(self.path).st_size
        except OSError:
            return 0

    def hole(self) -> Hole | None:
        """The range the run's keeper freed (written, not kept), if any."""
        return read_hole(self.path)

    def read(
        self, start: int, length: int, hole: Hole | None = None, *, hole_read: bool = False
    ) -> bytes:
        """What is kept of the `length` bytes at offset `start` (the freed range left out).
        `hole_read`: the caller has just read the hole record (`hole`), so the first try
        reads with it instead of reading the record again."""
        if length <= 0:
            return b""
        data = b""
        for _ in range(_STABLE_TRIES):
            if not hole_read:
                hole = self.hole()
            hole_read = False
            data = self._read_kept(max(0, start), length, hole)
            if self.hole() == hole:
                break  # else the keeper freed more meanwhile: what was read may be zeros
        return data

    def _read_kept(self, start: int, length: int, hole: Hole | None) -> bytes:
        end = start + length
        try:
            # An open, preads and a close: a buffered file adds a stat, an ioctl and seeks,
            # on the way to every run's answer.
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return b""
        try:
            if hole is None or hole.end <= start or hole.start >= end:
                return _pread(fd, start, length)
            before = _pread(fd, start, max(0, hole.start - start))
            return before + _pread(fd, max(start, hole.end), max(0, end - max(start, hole.end)))
        except OSError:
            return b""
        finally:
            os.close(fd)

    def head(self, length: int) -> bytes:
        return self.read(0, length)

    def tail(self, length: int) -> bytes:
        """The last `length` kept bytes (all of a smaller spool)."""
        size = self.size()
        hole = self.hole()
        start = max(0, size - length)
        if hole is not None and hole.start < size and start < hole.end:
            start = max(0, hole.start - (length - (size - hole.end)))
        return self.read(start, size - start)

    def chunks(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, bytes]]:
        """(offset, bytes) of what is kept from `start` to `stop` (default: the end as it
        grows), read in bounded pieces; a piece never spans the freed range."""
        pos = max(0, start)
        while stop is None or pos < stop:
            hole = self.hole()
            if hole is not None and hole.start <= pos < hole.end:
                pos = hole.end
                continue
            limit = _CHUNK_BYTES if stop is None else min(_CHUNK_BYTES, stop - pos)
            if hole is not None and pos < hole.start:
                limit = min(limit, hole.start - pos)
            data = self._read_kept(pos, limit, None)
            if not data:
                return
            if self.hole() != hole:
                continue  # freed meanwhile: look again where the kept bytes are
            yield pos, data
            pos += len(data)

    def chunks_backward(self, stop: int = 0) -> Iterator[tuple[int, bytes]]:
        """As `chunks`, from the end back to `stop`."""
        pos = self.size()
        piece = _FIRST_BACKWARD_BYTES
        while pos > stop:
            hole = self.hole()
            if hole is not None and hole.start < pos <= hole.end:
                pos = hole.start
                continue
            begin = max(stop, pos - piece)
            piece = min(_CHUNK_BYTES, piece * 2)
            if hole is not None and begin < hole.end <= pos:
                begin = hole.end
            data = self._read_kept(begin, pos - begin, None)
            if self.hole() != hole:
                continue
            if not data:
                return
            yield begin, data
            pos = begin

    def lines(self, start: int = 0, max_line_bytes: int = 64 * 1024) -> Iterator[bytes]:
        """Lines from offset `start`, each with its newline; a longer line comes in pieces of
        `max_line_bytes`, so one huge line cannot fill memory. The freed range ends a line."""
        for _offset, line in self.lines_at(start, max_line_bytes):
            yield line

    def lines_at(
        self, start: int = 0, max_line_bytes: int = 64 * 1024, stop: int | None = None
    ) -> Iterator[tuple[int, bytes]]:
        """(offset, line) as `lines`, the offset being where each line starts."""
        for offset, block in self.blocks(start, max_line_bytes, stop):
            yield from split_lines(offset, block, max_line_bytes)

    def blocks(
        self, start: int = 0, max_line_bytes: int = 64 * 1024, stop: int | None = None
    ) -> Iterator[tuple[int, bytes]]:
        """(offset, bytes) of whole lines from `start` on, in pieces of about a chunk: a
        scan can look at many lines at once. A block ends at a newline, where the freed
        range cuts a line, at the end, or (a line longer than `max_line_bytes`) mid-line."""
        pending = b""
        pending_at = max(0, start)
        for offset, data in self.chunks(start, self.size() if stop is None else stop):
            if pending and offset != pending_at + len(pending):
                yield pending_at, pending  # the freed range cut this line
                pending = b""
            if not pending:
                pending_at = offset
            buf = pending + data
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                cut = len(buf) // max_line_bytes * max_line_bytes  # whole pieces of a long line
            if cut:
                yield pending_at, buf[:cut]
            pending, pending_at = buf[cut:], pending_at + cut
        if pending:
            yield pending_at, pending

    def blocks_backward(
        self, stop: int = 0, max_line_bytes: int = 64 * 1024
    ) -> Iterator[tuple[int, bytes]]:
        """As `blocks`, from the end back to `stop` (the last block first)."""
        carry = b""
        carry_at = 0
        for offset, data in self.chunks_backward(stop):
            if carry and offset + len(data) != carry_at:
                yield carry_at, carry  # the freed range cut this line
                carry = b""
            buf = data + carry
            # Everything after the first newline is whole lines; before it, a line's end.
            cut = buf.find(b"\n") + 1
            if offset == stop:
                cut = 0  # nothing before `stop` belongs to this read
            elif cut == 0 and len(buf) >= max_line_bytes:
                cut = len(buf) - max_line_bytes
            if cut < len(buf) and (cut or offset == stop):
                yield offset + cut, buf[cut:]
                carry, carry_at = buf[:cut], offset
            else:
                carry, carry_at = buf, offset
        if carry:
            yield carry_at, carry

    def growth(self) -> _Watching:
        """Notice writes to the spool from here on: `async with spool.growth() as growth:
        await growth.wait()`."""
        return _Watching(self)


def split_lines(offset: int, block: bytes, max_line_bytes: int) -> Iterator[tuple[int, bytes]]:
    """(offset, line) of each line of `block` (at `offset`), a long line in pieces."""
    i = 0
    while i < len(block):
        cut = block.find(b"\n", i, i + max_line_bytes)
        end = cut + 1 if cut >= 0 else min(len(block), i + max_line_bytes)
        yield offset + i, block[i:end]
        i = end


class _Watching:
    """`Spool.growth()`: a `Growth` while the block lasts (a class, not `contextlib`'s
    decorator: the CLI reads spools through this module and does without `contextlib`)."""

    def __init__(self, spool: Spool) -> None:
        self._spool = spool
        self._watch: _Inotify | None = None

    async def __aenter__(self) -> Growth:
        self._watch = _Inotify.open(os.path.dirname(self._spool.path))
        try:
            return Growth(self._spool, self._watch)
        except BaseException:
            await self.__aexit__()
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None


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
        while self._spool.size() == self._seen:  # no inotify: polling is all there is
            import anyio

            await anyio.sleep(_POLL_SECONDS)
        self._seen = self._spool.size()


class _Inotify:
    """One inotify instance watching one folder; readiness of its fd means "something changed"."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def open(cls, folder: str) -> _Inotify | None:
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
        import anyio

        await anyio.wait_readable(self.fd)
        # The events only say that something changed; the size tells what. Drain them all.
        while True:
            try:
                if not os.read(self.fd, 64 * 1024):
                    return
            except BlockingIOError:
                return

    def close(self) -> None:
        import anyio

        anyio.notify_closing(self.fd)
        os.close(self.fd)


_LIBC: list[ctypes.CDLL | None] = []
"""`_libc()`'s answer, once asked."""


def _libc() -> ctypes.CDLL | None:
    if not _LIBC:
        _LIBC.append(_load_libc())
    return _LIBC[0]


def _load_libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: inotify is for the waits, not for a reader of the file

    try:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):  # a libc without inotify
        return None
    return lib


def _pread(fd: int, offset: int, length: int) -> bytes:
    """Up to `length` bytes at `offset` (fewer only at the end of the file)."""
    chunks: list[bytes] = []
    while length > 0:
        chunk = os.pread(fd, min(length, _PREAD_BYTES), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        length -= len(chunk)
    return b"".join(chunks)
