"""The spool keeper: holds one run's output file within its budget while anything writes it.

Started beside each run, in a session of its own (docs/spool.md has the whole story): once
the file outgrows the budget it frees the middle with `fallocate(FALLOC_FL_PUNCH_HOLE)`, so
the file keeps its logical size (offsets, cursors and the count of bytes written stay
exact) while its disk use stays near head + tail. The freed range is announced in
`<output>.hole` *before* it is punched, written so that even a full disk can take it. It
also holds the workspace to its budget, cuts runs to a floor when the disk runs short, and
exits once no process has the file open for writing (the last close wakes it; a read lease,
refused while a writer has the file open, confirms it). On a short disk it is started
before its run as the run's pump (`pump`): the run writes into a pipe and the keeper copies
it into the file, cutting before each write, so the writer waits instead of filling the disk.

Run by path (`python -I -S spool_keeper.py …`), it imports nothing but the standard
library: starting it costs an interpreter, not the package.
"""

from __future__ import annotations

# Not `signal` nor `typing`: they import enum and friends, tens of milliseconds per start.
import _signal  # type: ignore[import-not-found]
import errno
import os
import sys
import time

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true
if TYPE_CHECKING:
    from pathlib import Path

try:
    from .flocks import take
    from .spool_hole import (
        REASON_DISK,
        REASON_RUN,
        REASON_WORKSPACE,
        Hole,
        prepare,
        punch,
        read_hole,
    )
    from .spool_writers import GONE, IN_CLOSE_WRITE, Watch, writers_gone
except ImportError:  # run by path: no package, its neighbour file is loaded as a module
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    from flocks import take  # type: ignore[import-not-found, no-redef]
    from spool_hole import (  # type: ignore[import-not-found, no-redef]
        REASON_DISK,
        REASON_RUN,
        REASON_WORKSPACE,
        Hole,
        prepare,
        punch,
        read_hole,
    )
    from spool_writers import (  # type: ignore[import-not-found, no-redef]
        GONE,
        IN_CLOSE_WRITE,
        Watch,
        writers_gone,
    )


__all__ = [
    "FLOOR_BYTES",
    "REASON_DISK",
    "REASON_RUN",
    "REASON_WORKSPACE",
    "Budget",
    "Hole",
    "keep",
    "lock_path",
    "prepare",
    "pump",
    "punch",
    "read_hole",
    "room",
    "spool_dir_of",
    "squeeze_workspace",
]

FLOOR_BYTES = 256 * 1024
"""What any run keeps at least (half head, half tail): more than a result shows (16 KiB)."""
# The hole grows by at least this much at a time (fewer syscalls; part of the slack).
_MIN_STEP_BYTES = 1 << 20
# Free space below this on the spool's disk (or an eighth of the disk): runs keep their floor.
_RESERVE_BYTES = 64 << 20
# A keeper looks at the workspace's total at most this often.
_WORKSPACE_EVERY_SECONDS = 0.25
# After a wake it lets writes pile up this long (a busy writer would wake it per write),
# unless the spool is at its budget and a fast writer fills a step sooner.
_SETTLE_SECONDS = 0.005
# With room on the disk it waits for as long as the writer, at the rate seen, needs to come
# within half a step of its next cut, but never longer than this: at the fastest writer's
# rate that is less than the room that makes the disk tight (`_SETTLE_ROOM_BYTES`).
_SETTLE_MAX_SECONDS = 0.05
_MIN_PAUSE_SECONDS = 0.0002
# What a fast writer manages (`yes` into tmpfs): how soon a small disk can fill.
_FASTEST_WRITER_BYTES_PER_SECOND = 2 << 30
# Less room than this on the disk: the keeper paces itself on the writer's rate at once.
_SETTLE_ROOM_BYTES = 256 << 20
# The step of a run cut to its floor on a short disk (a small disk fills in milliseconds).
_SHORT_STEP_BYTES = 64 * 1024
# A pumping keeper reads the run's pipe this much at a time (its size: see `keepers.py`).
_PUMP_READ_BYTES = 1 << 20
# A disk full of others' data: how long a pump waits for room before it drops a chunk.
_FULL_DISK_PAUSE_SECONDS = 0.05
_FULL_DISK_PATIENCE_SECONDS = 60.0
# The scheduling priority a keeper takes where it may (see `_run_ahead`).
_KEEPER_NICE = -15
# Without any event for this long it checks for writers anyway (a missed close).
_IDLE_CHECK_SECONDS = 2.0


class Budget:
    __slots__ = ("run_bytes", "workspace_bytes")

    def __init__(self, run_bytes: int, workspace_bytes: int) -> None:
        self.run_bytes = run_bytes
        self.workspace_bytes = workspace_bytes


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
    runs = [os.path.join(top, name, "output") for name in names if name.startswith("run-")]
    rungs = [os.path.join(top, n) for n in names if n.startswith("verify-") and n.endswith(".out")]
    return runs + rungs


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


def room(folder: str | Path) -> int:
    """Free bytes on the spool's disk beyond the reserve; negative when the disk is short."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return 1 << 62
    return st.f_bavail * st.f_frsize - _reserve(folder, st)


def _reserve(folder: str | Path, st: os.statvfs_result | None = None) -> int:
    """`_RESERVE_BYTES`, or an eighth of a small disk."""
    try:
        st = st or os.statvfs(folder)
    except OSError:
        return 0
    return min(_RESERVE_BYTES, st.f_blocks * st.f_frsize // 8)


def lock_path(output: str | Path) -> str:
    """`keeper.lock` beside a run's `output`; `<file>.keeper` for a flat spool file."""
    out = os.path.abspath(output)
    if os.path.basename(out) == "output":
        return os.path.join(os.path.dirname(out), "keeper.lock")
    return out + ".keeper"


def spool_dir_of(output: str | Path) -> str:
    """The spool folder `output` belongs to: `spool/run-N/output` (a run's) or
    `spool/verify-<task>.out` (a verify rung's flat file)."""
    out = os.path.abspath(output)
    folder = os.path.dirname(out)
    return os.path.dirname(folder) if os.path.basename(out) == "output" else folder


def _hold_lock(output: str | Path) -> int | None:
    """The keeper's lock on its run's folder, held until it exits; None when taken."""
    return take(lock_path(output))


def keep(output: str | Path, budget: Budget) -> None:
    """Hold `output` within `budget` until no process writes it (the keeper's main loop)."""
    try:
        lock = _hold_lock(output)
    except FileNotFoundError:
        lock = None  # its run's folder is gone already (the tab closed as this started)
    if lock is None:
        _say_ready()
        return  # or another keeper holds this spool (two habitats adopted the run at once)
    watch = Watch(output)  # before the first look for writers: no close goes unseen
    try:
        prepare(output)  # an adopted run's folder may predate spares
    except OSError:
        pass  # a full disk: the first cut's record needs a new block, tried at each wake
    _say_ready()
    cutter = _Cutter(output, budget)
    look_for_writers = True
    seen = (time.monotonic(), _size(output))
    while True:
        try:
            cut = cutter.cut(final=look_for_writers)
        except OSError as exc:
            print(f"spool keeper: cannot free space in {output}: {exc}", file=sys.stderr)
            return  # a file system without hole punching: nothing a keeper can do
        if look_for_writers and writers_gone(output):
            # The last writes may have come after the cut above: one more, to the byte.
            try:
                cutter.last_cut()
            except OSError as exc:
                print(f"spool keeper: cannot free space in {output}: {exc}", file=sys.stderr)
            return
        if cut:
            look_for_writers = False
            continue  # a fast writer: look again before waiting for its next write
        mask = watch.wait(_IDLE_CHECK_SECONDS)
        if mask & GONE:
            return  # its run's folder was removed (the tab closed, the history trimmed)
        look_for_writers = not mask or bool(mask & IN_CLOSE_WRITE)
        if not look_for_writers:
            seen = _settle(output, seen, cutter, budget.run_bytes)


class _Cutter:
    """One keeper's cuts: its run to the budget, the workspace to its own, the disk's reserve."""

    def __init__(self, output: str | Path, budget: Budget) -> None:
        self.output = output
        self.budget = budget
        self.spool_dir = spool_dir_of(output)
        self.half = budget.run_bytes // 2
        self.tail_limit = budget.run_bytes - self.half
        """Lowered (never raised again) while the workspace is over its budget."""
        self.short = False
        """Cut to the floor: the disk was nearly full, and cannot yet take a whole budget."""
        self.disk_bound = False
        """Held below the budget by what the disk can take: cut at once, no pause."""
        self.tight = False
        self.step = 0
        self.free = 0
        self.next_workspace = 0.0

    def last_cut(self) -> int:
        """The cut as the keeper exits, no process writing the run any more: to the byte, and
        the workspace's too, whenever its last look was. A run that reached its budget within
        `_WORKSPACE_EVERY_SECONDS` of that look and ended left the workspace over its budget
        for good, with no keeper left to look again (5 runs of 30 MB under load: 12.5 MiB
        of a 12 MiB budget, until a later run's keeper came)."""
        self.next_workspace = 0.0
        return self.cut(final=True)

    def cut(self, final: bool) -> int:
        """Cut what is due (to the byte when `final`); returns the bytes freed. Raises
        OSError where holes cannot be punched."""
        budget = self.budget
        head, tail, reason = self.half, self.tail_limit, REASON_RUN
        if self.tail_limit < budget.run_bytes - self.half:
            reason = REASON_WORKSPACE
        self.step = max(_MIN_STEP_BYTES, budget.run_bytes // 64)
        left = room(self.spool_dir)
        self.free = left + _reserve(self.spool_dir)
        if left < 0 and not self.short:
            self.next_workspace = 0.0  # the others go down to their floor at once
        # Short from the moment the disk is nearly full until it could take a whole run's
        # budget again: cutting only once it is nearly full again would race the writer.
        self.short = left < 0 or (self.short and left < budget.run_bytes)
        # A disk that cannot take the budget: the run keeps a quarter of what it and the
        # free room hold together, so a writer has most of the disk to fill before the
        # next cut instead of the last few megabytes of it.
        keep = max(FLOOR_BYTES, (_on_disk(self.output) + left) // 4)
        self.disk_bound = self.short or keep < budget.run_bytes
        self.tight = self.disk_bound or left < _SETTLE_ROOM_BYTES
        if self.short:
            head, tail, reason = FLOOR_BYTES // 2, FLOOR_BYTES // 2, REASON_DISK
            self.step = _SHORT_STEP_BYTES
        elif self.disk_bound:
            head, tail, reason = min(head, keep // 2), min(tail, keep - keep // 2), REASON_DISK
            self.step = max(_SHORT_STEP_BYTES, min(self.step, keep // 8))
        try:
            cut = punch(self.output, head, tail, reason, step=0 if final else self.step)
            now = time.monotonic()
            if now >= self.next_workspace:
                # After its own cut: a run's first burst is its own budget's business.
                self.next_workspace = now + _WORKSPACE_EVERY_SECONDS
                over = squeeze_workspace(
                    self.spool_dir,
                    0 if self.short else budget.workspace_bytes,
                    own=self.output,
                    own_cap=budget.run_bytes,
                )
                if over and not self.short:
                    self.tail_limit = max(FLOOR_BYTES // 2, tail - over)
                    cut += punch(self.output, head, self.tail_limit, REASON_WORKSPACE)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
            # No room even for the record (the disk filled before the keeper could make
            # its spare): each wake tries again, as the disk's other users free space.
            return 0
        return cut


def _size(output: str | Path) -> int:
    try:
        return os.stat(output).st_size
    except OSError:
        return 0


def _settle(
    output: str | Path, seen: tuple[float, int], cutter: _Cutter, run_bytes: int
) -> tuple[float, int]:
    """Let writes gather after a wake (a busy writer would wake the keeper per write, and a
    keeper ahead of it in priority would slow it to a crawl) for `_pause`. Returns (when,
    size)."""
    now, size = time.monotonic(), _size(output)
    rate = (size - seen[1]) / max(now - seen[0], 1e-6)
    pause = _pause(size, rate, cutter, run_bytes)
    if pause >= _MIN_PAUSE_SECONDS:
        time.sleep(pause)
    return now, size


def _pause(size: int, rate: float, cutter: _Cutter, run_bytes: int) -> float:
    """How long the keeper lets writes gather: with room on the disk, until the writer, at
    the `rate` it was seen writing, comes within half a step of the next cut (the spool at
    its budget plus a step), at most `_SETTLE_MAX_SECONDS`; a keeper
    woken every 5 ms by each of 8 loud tabs took about a third of a core from the host and
    its callers (issue 23). Once the disk is tight, no longer than the writer needs to fill
    a step (at most 5 ms); on a disk that cannot take the budget, no longer than the fastest
    writer needs to fill a quarter of what is free."""
    if rate <= 0:
        return _SETTLE_SECONDS
    if not cutter.tight:
        due = max(0, run_bytes - size) + cutter.step // 2
        return min(_SETTLE_MAX_SECONDS, due / rate)
    pause = min(_SETTLE_SECONDS, cutter.step / rate)
    if cutter.disk_bound:
        pause = min(pause, max(0, cutter.free) / 4 / _FASTEST_WRITER_BYTES_PER_SECOND)
    return pause


def _say_ready() -> None:
    """Tell a habitat waiting to start the command that cuts are watched for (stdout)."""
    try:
        os.write(1, b"ready\n")
        os.close(1)
    except OSError:
        pass  # nobody waits (stdout is /dev/null, or the habitat is gone)


def _run_ahead() -> None:
    """Ahead of the writers in priority where the system allows (root, or an RLIMIT_NICE):
    the keeper runs only to free what they wrote, and one left waiting for a core while a
    fast writer runs lets a small disk fill (tens of milliseconds on a loaded machine)."""
    current = os.getpriority(os.PRIO_PROCESS, 0)
    for nice in (min(_KEEPER_NICE, current), current - 5):
        try:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        except OSError:
            continue
        return


def pump(output: str | Path, budget: Budget) -> None:
    """On a short disk: the run writes into a pipe (stdin here) and the keeper copies it into
    `output`, cutting *before* each write that the disk could not take. A writer can never
    outrun it: when the keeper is kept off a core, the writer waits on the full pipe instead
    of failing with ENOSPC. Ends at the pipe's end (no process of the run holds it)."""
    lock = _hold_lock(output)
    sink = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        prepare(output)
    except OSError:
        pass  # a full disk: the first cut's record needs a new block, tried at each cut
    _say_ready()
    cutter = _Cutter(output, budget)
    due = 0
    while data := _read_pipe():
        due -= len(data)
        if due <= 0 or room(cutter.spool_dir) < len(data):
            _cut(cutter, output, final=True)
            due = _SHORT_STEP_BYTES if cutter.disk_bound else cutter.step
        _write_all(sink, data, cutter, output)
    try:
        cutter.last_cut()
    except OSError as exc:
        print(f"spool keeper: cannot free space in {output}: {exc}", file=sys.stderr)
    os.close(sink)
    if lock is not None:
        os.close(lock)


def _read_pipe() -> bytes:
    try:
        return os.read(0, _PUMP_READ_BYTES)
    except OSError:
        return b""


def _cut(cutter: _Cutter, output: str | Path, final: bool) -> int:
    try:
        return cutter.cut(final)
    except OSError as exc:
        print(f"spool keeper: cannot free space in {output}: {exc}", file=sys.stderr)
        return 0


def _write_all(sink: int, data: bytes, cutter: _Cutter, output: str | Path) -> None:
    """Write `data` whole; on a full disk cut to the floor and try again, pausing while the
    disk's other users hold it full (the run waits on its pipe meanwhile, losing nothing)."""
    view = memoryview(data)
    waited = 0.0
    while view:
        try:
            view = view[os.write(sink, view) :]
            continue
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                print(f"spool keeper: cannot write {output}: {exc}", file=sys.stderr)
                return
        if _cut(cutter, output, final=True) == 0:
            if waited >= _FULL_DISK_PATIENCE_SECONDS:
                print(f"spool keeper: {output}: the disk stayed full", file=sys.stderr)
                return
            time.sleep(_FULL_DISK_PAUSE_SECONDS)
            waited += _FULL_DISK_PAUSE_SECONDS


def main(argv: list[str]) -> int:
    output, run_bytes, workspace_bytes = argv[0], int(argv[1]), int(argv[2])
    pumped = argv[3:] == ["pump"]
    if os.fork():
        os._exit(0)  # the habitat reaps this at once; the keeper itself is init's to reap
    # A lease being broken signals its holder with SIGIO (default: terminate).
    _signal.signal(_signal.SIGIO, _signal.SIG_IGN)
    _run_ahead()
    if pumped:
        pump(output, Budget(run_bytes, workspace_bytes))
    else:
        keep(output, Budget(run_bytes, workspace_bytes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
