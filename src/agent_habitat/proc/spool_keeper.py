"""The spool keeper: holds one run's output file within its budget while anything writes it.

A run's processes write their output file themselves (an O_APPEND descriptor, no pipe the
habitat holds), so a run outlives the habitat that started it. A keeper is a small process
started beside each run, in a session of its own: once the file outgrows the run's budget
it frees the middle with `fallocate(FALLOC_FL_PUNCH_HOLE)`. The file keeps its logical size
(every offset, every cursor stays valid; the count of bytes written is exact) while its
disk use stays near head + tail. The omitted range is announced in `<output>.hole` *before*
it is punched, so a reader that saw the record skips the range and one that read the old
record sees it change and reads again.

A keeper also holds the workspace to its budget (punching the oldest spools down to a
floor) and, when the disk runs short, cuts the tail to the floor so the command keeps
running. It exits when no process has the file open for writing any more: the last writer
closing its descriptor wakes it (inotify `IN_CLOSE_WRITE`), and a read lease, which the
kernel refuses while any writer has the file open, confirms it.

This module is run by path (`python -I -S spool_keeper.py …`), so it imports nothing but
the standard library: starting it costs an interpreter, not the package.
"""

from __future__ import annotations

# Not `signal` nor `typing`: they import enum and friends, tens of milliseconds per start.
import _signal  # type: ignore[import-not-found]
import ctypes
import errno
import fcntl
import os
import select
import struct
import sys
import time

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true
if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

__all__ = [
    "FLOOR_BYTES",
    "REASON_DISK",
    "REASON_RUN",
    "REASON_WORKSPACE",
    "Budget",
    "Hole",
    "keep",
    "keeper_alive",
    "punch",
    "read_hole",
    "squeeze_workspace",
    "start_keeper",
]

FLOOR_BYTES = 256 * 1024
"""What any run keeps at least (half head, half tail): more than a result shows (16 KiB)."""
# The hole grows by at least this much at a time (fewer syscalls; part of the slack).
_MIN_STEP_BYTES = 1 << 20
# Free space below this on the spool's disk (or an eighth of the disk): runs keep their floor.
_RESERVE_BYTES = 64 << 20
# A keeper looks at the workspace's total at most this often.
_WORKSPACE_EVERY_SECONDS = 0.25
# After a wake it lets writes pile up this long (a busy writer would wake it per write).
_SETTLE_SECONDS = 0.005
# Without any event for this long it checks for writers anyway (a missed close).
_IDLE_CHECK_SECONDS = 2.0
_FALLOC_FL_KEEP_SIZE = 0x01
_FALLOC_FL_PUNCH_HOLE = 0x02
_IN_MODIFY = 0x002
_IN_CLOSE_WRITE = 0x008
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_IGNORED = 0x8000
_GONE = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED


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
        return isinstance(other, Hole) and (self.start, self.end, self.reason) == (
            other.start,
            other.end,
            other.reason,
        )

    def __hash__(self) -> int:
        return hash((self.start, self.end, self.reason))

    def __repr__(self) -> str:
        return f"Hole({self.start}, {self.end}, {self.reason!r})"


class Budget:
    __slots__ = ("run_bytes", "workspace_bytes")

    def __init__(self, run_bytes: int, workspace_bytes: int) -> None:
        self.run_bytes = run_bytes
        self.workspace_bytes = workspace_bytes


def hole_path(output: str | Path) -> str:
    return os.fspath(output) + ".hole"


def read_hole(output: str | Path) -> Hole | None:
    try:
        with open(hole_path(output), "rb") as f:
            start, end, reason = f.read(256).decode("ascii").split(" ", 2)
        hole = Hole(int(start), int(end), reason.strip())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return hole if 0 <= hole.start < hole.end else None


def _write_hole(output: str | Path, hole: Hole) -> None:
    temporary = hole_path(output) + ".tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, f"{hole.start} {hole.end} {hole.reason}\n".encode("ascii"))
    finally:
        os.close(fd)
    os.replace(temporary, hole_path(output))


_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
if _libc is not None:
    _libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]


def _fallocate_punch(fd: int, start: int, length: int) -> None:
    if _libc is None:
        raise OSError(errno.EOPNOTSUPP, "no fallocate on this platform")
    flags = _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE
    if _libc.fallocate(fd, flags, start, length) != 0:
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


def _on_disk(path: str | Path) -> int:
    try:
        return os.stat(path).st_blocks * 512
    except OSError:
        return 0


def _outputs(spool_dir: str | Path) -> list[str]:
    try:
        names = os.listdir(spool_dir)
    except OSError:
        return []
    top = os.path.abspath(spool_dir)
    return [os.path.join(top, name, "output") for name in names if name.startswith("run-")]


def squeeze_workspace(
    spool_dir: str | Path, budget: int, own: str | Path | None = None, own_cap: int | None = None
) -> int:
    """Bring the spools of `spool_dir` within `budget` bytes on disk, punching the oldest
    down to `FLOOR_BYTES` first; returns what is still over. `own`, the caller's run, is
    left to the caller (it cuts its own tail rather than drop to the floor at once), and
    counts at most `own_cap`: what a fast writer added since the caller's own cut is that
    run's budget's business, not a reason to shrink it for the workspace."""
    mine = os.path.abspath(own) if own is not None else None
    sized: list[tuple[float, str]] = []
    for path in _outputs(spool_dir):
        try:
            sized.append((os.stat(path).st_mtime, path))
        except OSError:
            continue

    def counted(path: str) -> int:
        size = _on_disk(path)
        return min(size, own_cap) if path == mine and own_cap is not None else size

    total = sum(counted(path) for _, path in sized)
    for _, path in sorted(sized):
        if total <= budget:
            break
        if path == mine:
            continue
        before = _on_disk(path)
        punch(path, FLOOR_BYTES // 2, FLOOR_BYTES // 2, REASON_WORKSPACE)
        total -= before - _on_disk(path)
    return max(0, total - budget)


def _disk_short(folder: str | Path) -> bool:
    """Whether the spool's disk has less free than `_RESERVE_BYTES` (an eighth of a small one)."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    reserve = min(_RESERVE_BYTES, st.f_blocks * st.f_frsize // 8)
    return st.f_bavail * st.f_frsize < reserve


def _writers_gone(output: str | Path) -> bool:
    """Whether no process has `output` open for writing (the kernel grants a read lease
    only then); True when the file is gone."""
    try:
        fd = os.open(output, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return True
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EBUSY):
            return False
        return not _open_elsewhere(os.fstat(fd))  # leases refused here: look in /proc
    else:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        return True
    finally:
        os.close(fd)


def _open_elsewhere(st: os.stat_result) -> bool:
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            try:
                other = os.stat(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                return True
    return False


class _Watch:
    """inotify on one file: `wait()` returns the event mask seen (0 on a timeout)."""

    def __init__(self, output: str | Path) -> None:
        assert _libc is not None
        self.fd = _libc.inotify_init1(os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        mask = _IN_MODIFY | _IN_CLOSE_WRITE | _IN_DELETE_SELF | _IN_MOVE_SELF
        if _libc.inotify_add_watch(self.fd, os.fsencode(output), mask) < 0:
            os.close(self.fd)
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {output}")

    def wait(self, timeout: float) -> int:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return 0
        data = os.read(self.fd, 64 * 1024)
        mask = 0
        offset = 0
        while offset + 16 <= len(data):
            _wd, event, _cookie, length = struct.unpack_from("iIII", data, offset)
            mask |= event
            offset += 16 + length
        return mask


def _lock_path(output: str | Path) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(output)), "keeper.lock")


def _hold_lock(output: str | Path) -> int | None:
    """The keeper's lock on its run's folder, held until it exits; None when taken."""
    fd = os.open(_lock_path(output), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def keeper_alive(output: str | Path) -> bool:
    """Whether a keeper holds `output` now (its lock is taken)."""
    try:
        fd = os.open(_lock_path(output), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def keep(output: str | Path, budget: Budget) -> None:
    """Hold `output` within `budget` until no process writes it (the keeper's main loop)."""
    half = budget.run_bytes // 2
    step = max(_MIN_STEP_BYTES, budget.run_bytes // 64)
    spool_dir = os.path.dirname(os.path.dirname(os.path.abspath(output)))
    lock = _hold_lock(output)
    if lock is None:
        return  # another keeper holds this spool (two habitats adopted the run at once)
    watch = _Watch(output)  # before the first look for writers: no close goes unseen
    look_for_writers = True
    next_workspace = 0.0
    tail_limit = budget.run_bytes - half
    """Lowered (never raised again) while the workspace is over its budget."""
    while True:
        head, tail, reason = half, tail_limit, REASON_RUN
        if tail_limit < budget.run_bytes - half:
            reason = REASON_WORKSPACE
        if _disk_short(spool_dir):
            head, tail, reason = min(head, FLOOR_BYTES // 2), FLOOR_BYTES // 2, REASON_DISK
            squeeze_workspace(spool_dir, 0, own=output)
        try:
            punch(output, head, tail, reason, step=0 if look_for_writers else step)
            now = time.monotonic()
            if now >= next_workspace:
                # After its own cut: a run's first burst is its own budget's business.
                next_workspace = now + _WORKSPACE_EVERY_SECONDS
                over = squeeze_workspace(
                    spool_dir, budget.workspace_bytes, own=output, own_cap=budget.run_bytes
                )
                if over and reason != REASON_DISK:
                    tail_limit = max(FLOOR_BYTES // 2, tail - over)
                    tail, reason = tail_limit, REASON_WORKSPACE
                    punch(output, head, tail, reason)
        except OSError as exc:
            print(f"spool keeper: cannot free space in {output}: {exc}", file=sys.stderr)
            return  # a file system without hole punching: nothing a keeper can do
        if look_for_writers and _writers_gone(output):
            # The last writes may have come after the cut above: one more, to the byte.
            try:
                punch(output, head, tail, reason)
            except OSError as exc:
                print(f"spool keeper: cannot free space in {output}: {exc}", file=sys.stderr)
            return
        mask = watch.wait(_IDLE_CHECK_SECONDS)
        if mask & _GONE:
            return  # its run's folder was removed (the tab closed, the history trimmed)
        look_for_writers = not mask or bool(mask & _IN_CLOSE_WRITE)
        if not look_for_writers:
            time.sleep(_SETTLE_SECONDS)


def main(argv: list[str]) -> int:
    output, run_bytes, workspace_bytes = argv[0], int(argv[1]), int(argv[2])
    # A lease being broken signals its holder with SIGIO (default: terminate).
    _signal.signal(_signal.SIGIO, _signal.SIG_IGN)
    keep(output, Budget(run_bytes, workspace_bytes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


# Keepers started by this process, reaped by the next start (none is ever waited for).
_STARTED: set[subprocess.Popen[bytes]] = set()


def start_keeper(output: Path, budget: Budget) -> subprocess.Popen[bytes] | None:
    """Start the keeper of a run's `output` (already open by the run's processes): its own
    session, no environment, out of reach of the run's kill. None where the kernel cannot
    punch holes (not Linux): there the spool is not held to its budget."""
    import subprocess

    if _libc is None:
        return None
    for started in list(_STARTED):
        if started.poll() is not None:
            _STARTED.discard(started)
    argv = [sys.executable, "-I", "-S", os.path.abspath(__file__), os.fspath(output)]
    argv += [str(budget.run_bytes), str(budget.workspace_bytes)]
    keeper = subprocess.Popen(
        argv,
        cwd="/",
        env={},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    _STARTED.add(keeper)
    return keeper
