"""A spool's hole: the one range of a run's output that was written but not kept.

The keeper (`spool_keeper.py`) frees the middle of a spool that outgrew its budget with
`fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)`: the file keeps its logical size, so
every offset and the count of bytes written stay exact. The range is announced in
`<output>.hole` *before* it is punched: a reader that saw the record skips the range, and
one that read the old record sees it change and reads again (it never shows the zeros).

Standard library only, like the keeper that loads it by path.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true
if TYPE_CHECKING:
    import ctypes
    from pathlib import Path

__all__ = [
    "REASON_DISK",
    "REASON_RUN",
    "REASON_WORKSPACE",
    "Hole",
    "hole_path",
    "prepare",
    "punch",
    "read_hole",
]

_FALLOC_FL_KEEP_SIZE = 0x01
_FALLOC_FL_PUNCH_HOLE = 0x02

REASON_RUN = "over the run's spool budget"
REASON_WORKSPACE = "over the workspace's spool budget"
REASON_DISK = "the disk holding the spool was nearly full"


# Plain classes, no dataclasses, json or pathlib: each import is milliseconds of every
# run's start (the record is `<start> <end> <reason>`, one line of ASCII).
class Hole:
    """The one freed range of a spool, [start, end): those bytes were written, not kept."""

    __slots__ = ("end", "reason", "start")

    def __init__(self, start: int, end: int, reason: str) -> None:
        self.start = start
        self.end = end
        self.reason = reason
        """Why they were not kept (one of the `REASON_*` phrases)."""

    @property
    def length(self) -> int:
        return self.end - self.start

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hole):
            return False
        return (self.start, self.end, self.reason) == (other.start, other.end, other.reason)

    def __hash__(self) -> int:
        return hash((self.start, self.end, self.reason))

    def __repr__(self) -> str:
        return f"Hole({self.start}, {self.end}, {self.reason!r})"


def hole_path(output: str | Path) -> str:
    return os.fspath(output) + ".hole"


def read_hole(output: str | Path) -> Hole | None:
    # An open, a read and a close: a buffered file adds a stat and an ioctl, and most spools
    # have no record (the open fails), which a run's answer looks for.
    try:
        fd = os.open(hole_path(output), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        start, end, reason = os.read(fd, 256).decode("ascii").split(" ", 2)
        hole = Hole(int(start), int(end), reason.strip())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)
    return hole if 0 <= hole.start < hole.end else None


def _spare_path(output: str | Path) -> str:
    return hole_path(output) + ".tmp"


def _write_hole(output: str | Path, hole: Hole) -> None:
    """Replace the record, needing no new block of the disk: the record is written into a
    spare file that already holds one (made by `prepare`) and swapped in atomically, so
    the spare then holds the old record's block. On a full disk this is what lets a keeper
    announce the cut that frees it."""
    spare = _spare_path(output)
    fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        data = f"{hole.start} {hole.end} {hole.reason}\n".encode("ascii")
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)
    if not _exchange(spare, hole_path(output)):
        os.replace(spare, hole_path(output))  # the first record (or no renameat2)


def prepare(output: str | Path) -> None:
    """Make the spare record file `_write_hole` needs, holding a block: called before a run
    starts (while its disk has room) and after each cut. Raises OSError(ENOSPC) when the
    disk is full (the run cannot start)."""
    try:
        fd = os.open(
            _spare_path(output), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600
        )
    except FileExistsError:
        return
    try:
        os.write(fd, b"0 0 spare\n")
    except OSError:
        os.unlink(_spare_path(output))  # an empty spare would be no spare
        raise
    finally:
        os.close(fd)


_LIBC: list[ctypes.CDLL | None] = []


def _libc() -> ctypes.CDLL | None:
    """libc, loaded on first use: a reader of holes (the CLI copying a spool) never punches
    one, and must not pay for importing `ctypes`."""
    if not _LIBC:
        lib = None
        if sys.platform.startswith("linux"):
            import ctypes

            lib = ctypes.CDLL(None, use_errno=True)
            lib.fallocate.argtypes = [
                ctypes.c_int,
                ctypes.c_int,
                ctypes.c_longlong,
                ctypes.c_longlong,
            ]
        _LIBC.append(lib)
    return _LIBC[0]


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: str, b: str) -> bool:
    """Swap two names atomically (`renameat2(RENAME_EXCHANGE)`); False when `b` does not
    exist or the system cannot (the caller renames instead)."""
    rename2 = getattr(_libc(), "renameat2", None)
    if rename2 is None:
        return False
    done = rename2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(done == 0)


def _fallocate_punch(fd: int, start: int, length: int) -> None:
    lib = _libc()
    if lib is None:
        raise OSError(errno.EOPNOTSUPP, "no fallocate on this platform")
    flags = _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE
    if lib.fallocate(fd, flags, start, length) != 0:
        import ctypes

        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def punch(output: str | Path, head: int, tail: int, reason: str, step: int = 0) -> int:
    """Keep at most `head` bytes at the start and `tail` at the end of `output` (whole
    blocks), freeing the rest; returns the bytes newly freed. The hole only ever grows, and
    not by less than `step`. Keepers of several runs may squeeze one file: the record is
    updated under an exclusive lock on the file."""
    # Looked at before the file is opened for writing: a keeper's own close wakes it.
    try:
        if _plan(os.stat(output), read_hole(output), head, tail, step) is None:
            return 0
        fd = os.open(output, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return 0
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        old = read_hole(output)
        plan = _plan(os.fstat(fd), old, head, tail, step)
        if plan is None:
            return 0
        start, end, grown = plan
        # Announced before it is punched: see the module's docstring.
        _write_hole(output, Hole(start, end, reason))
        if old is None:
            _fallocate_punch(fd, start, end - start)
        else:
            if start < old.start:
                _fallocate_punch(fd, start, old.start - start)
            if end > old.end:
                _fallocate_punch(fd, old.end, end - old.end)
        try:
            prepare(output)  # the first record took the spare: the next needs one
        except OSError:
            pass  # tried again after the next cut
        return grown
    finally:
        os.close(fd)


def _plan(
    st: os.stat_result, old: Hole | None, head: int, tail: int, step: int
) -> tuple[int, int, int] | None:
    """The hole to have (start, end, bytes it grows by), or None when none is due."""
    block = max(512, st.st_blksize)
    start = -(-head // block) * block
    end = (max(0, st.st_size - tail) // block) * block
    if old is not None:
        start, end = min(start, old.start), max(end, old.end)
    grown = (end - start) - (old.length if old else 0)
    if end <= start or grown <= 0 or grown < step:
        return None
    return start, end, grown
