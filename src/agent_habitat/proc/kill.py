"""Kill a supervised process and everything it started — the one place that owns killing.

Members of a run are found three ways, because each alone misses some:
* its session (the run is a session leader; children and double-forked grandchildren
  stay in it unless they call setsid),
* its descendants by parent link (covers children that called setsid but are not orphaned),
* the `HABITAT_RUN_ID` marker in the environment (covers daemons that double-forked *and*
  called setsid: they were reparented to init, but they inherited the environment),
* the run's own cgroup where the machine allows one (`cgroup.py`): the only trace left by a
  daemon that also cleared its environment (`setsid env -i …`). Without it such a process
  cannot be found, and the report says so (`tracking`, `untracked`) rather than claim
  that nothing remains.

Finding members and signalling them are two steps, and a shell loop replaces its
short-lived children between them (`while :; do sleep 0.05; done`): a child forked after
the scan would never hear the signal. So every process group of the run is signalled
with one `killpg`, which the kernel delivers to the whole group at once, including a child
forked concurrently (fork restarts when a group signal arrives mid-way); only members
outside the run's groups are signalled one by one.
"""

from __future__ import annotations

import contextlib
import os
import signal as signal_module
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..lazy import lazy_module
from . import cgroup
from .record import ProcessRecord
from .supervised import MARKER_ENV

if TYPE_CHECKING:
    import psutil
else:
    psutil = lazy_module("psutil")  # proc/ calls it in a few places: loaded when one runs

__all__ = ["DEFAULT_POLICY", "KillPolicy", "KillReport", "kill_tree", "marked_leader", "members"]

# Two reads of one process's start time agree within this (see record.py).
_SAME_START = 0.05


@dataclass
class KillPolicy:
    """How patient `kill_tree` is. Read at every call, so changing it takes effect at once."""

    grace_seconds: float = 2.0
    """How long SIGTERM (or another asked-for signal) gets before SIGKILL."""
    reap_seconds: float = 2.0
    """After SIGKILL the kernel still has to tear processes down; this bounds verification."""


# The process-wide policy: `kill_tree(record)` without a grace uses it. The shell passes its
# configured `kill_grace_seconds`; tests may shorten `DEFAULT_POLICY.grace_seconds`.
DEFAULT_POLICY = KillPolicy()


@dataclass
class KillReport:
    pids: list[int] = field(default_factory=list)
    """Every member pid that was signalled (each alone or through its process group)."""
    remaining: list[int] = field(default_factory=list)
    """Pids still alive at the end (should be empty)."""
    tracking: cgroup.Tracking = "marker"
    """How members were found: `cgroup` (all of them) or `marker` (see `untracked`)."""
    untracked: str | None = None
    """What could not be looked for, when something could not (None: nothing escaped)."""


@dataclass
class _Scan:
    procs: list[psutil.Process]
    groups: set[int]
    """Process groups that lie wholly inside the run: safe to signal as one."""


def _has_marker(proc: psutil.Process, marker: str) -> bool:
    try:
        return bool(proc.environ().get(MARKER_ENV) == marker)
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
        return False


def _born_since(proc: psutil.Process, started: float) -> bool:
    """Whether `proc` may descend from a run started at `started` (0: unknown). Every member
    was born after its leader; reading the start time is cheaper than the environment, and
    a run's end looks at every process this way."""
    if not started:
        return True
    try:
        return bool(proc.create_time() >= started - _SAME_START)
    except psutil.Error:
        return False


class _Births:
    """Whether a pid may have been born since a run started, read from its `stat` line
    where the system has one (/proc/PID/stat on Linux) instead of a `psutil.Process` per
    process on the machine: a run's end looks at every process, and building one read its
    stat file and the boot time again (`/proc/stat`) for each: 25-100 ms a scan with ~200
    processes on a loaded machine, where its members are most often none. None (no such
    file, or a line it cannot read) leaves the answer to psutil, as before."""

    def __init__(self, started: float) -> None:
        self.threshold: float | None = None
        if started:
            try:
                boot, hz = psutil.boot_time(), os.sysconf("SC_CLK_TCK")
            except (OSError, ValueError, psutil.Error):
                return
            # In clock ticks since boot, one tick lower: a start at the edge counts as born.
            self.threshold = (started - _SAME_START - boot) * hz - 1

    def maybe(self, pid: int) -> bool:
        if self.threshold is None:
            return True
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                line = f.read()
            # Field 22 (starttime), counted after the command name's closing parenthesis.
            ticks = int(line[line.rindex(b")") + 2 :].split()[19])
        except (OSError, ValueError, IndexError):
            return True
        return ticks >= self.threshold


def _leader(record: ProcessRecord) -> tuple[psutil.Process | None, bool]:
    """The run's leader if it still runs, and whether its session id still names the run.

    Linux never hands out a pid that is still some session's id, so while any member of
    the run's session lives, that session id is ours. Only when the pid now belongs to a
    different process (start time differs) has the old session ended and the id been reused.
    """
    try:
        leader = psutil.Process(record.pid)
        created = leader.create_time()
    except psutil.Error:
        return None, True
    if record.create_time and abs(created - record.create_time) >= _SAME_START:
        return None, False
    return leader, True


def _scan(record: ProcessRecord) -> _Scan:
    exclude = {os.getpid()}
    with contextlib.suppress(psutil.Error):
        exclude.update(p.pid for p in psutil.Process().parents())
    leader, session_is_ours = _leader(record)
    found: dict[int, psutil.Process] = {}
    sessions: dict[int, int] = {}
    marker = record.marker
    grouped = cgroup.group_pids(marker) if marker is not None else None
    in_group = set(grouped or ())
    # A run whose leader was in its cgroup before it could fork has every process there, so
    # its members are read there instead of from every process's environment. One placed
    # after its start (this process cannot tell it was in time: an adopted run, a rung) may
    # have forked a child outside first: its group's processes are members, and so is what
    # the scan finds.
    trusted = marker is not None and grouped is not None and cgroup.born_inside(marker)
    # Not psutil.process_iter: it keeps Process objects between calls and, for a pid that
    # was reused since, hands back the old one; psutil then refuses to signal it (or read
    # its status) as "reused", and a member of this run went unsignalled and unreported.
    births = _Births(record.create_time)
    for pid in in_group if trusted else psutil.pids():
        if pid in exclude:
            continue
        try:
            sid = os.getsid(pid)
        except OSError:
            continue
        in_session = session_is_ours and sid == record.pid
        if not (pid in in_group or in_session or (marker is not None and births.maybe(pid))):
            continue  # older than the run, outside its session and group: not a member
        try:
            proc = psutil.Process(pid)
        except psutil.Error:
            continue
        if (
            pid in in_group
            or in_session
            or (
                record.marker is not None
                and _born_since(proc, record.create_time)
                and _has_marker(proc, record.marker)
            )
        ):
            found[pid] = proc
            sessions[pid] = sid
    if leader is not None:
        found[leader.pid] = leader
        with contextlib.suppress(psutil.Error):
            for child in leader.children(recursive=True):
                found.setdefault(child.pid, child)
    procs = [p for p in found.values() if _running(p)]
    # A session holds only descendants of its leader, and setpgid cannot leave a session:
    # every group in the run's session, or in the session of a member that called setsid,
    # is made of the run's processes alone. The pids we do not own are never in such a group.
    owned = {record.pid} if session_is_ours else set()
    owned.update(pid for pid, sid in sessions.items() if pid == sid)
    groups: set[int] = set()
    for proc in procs:
        if sessions.get(proc.pid, -1) in owned:
            with contextlib.suppress(OSError):
                groups.add(os.getpgid(proc.pid))
    # A habitat running inside a run (a person nests one in a tab) must not signal itself.
    for pid in exclude:
        with contextlib.suppress(OSError):
            groups.discard(os.getpgid(pid))
    return _Scan(procs, groups)


def members(record: ProcessRecord) -> list[psutil.Process]:
    """Live processes belonging to the run of `record` (never this process or its parents)."""
    return _scan(record).procs


def marked_leader(marker: str) -> ProcessRecord | None:
    """The live session leader carrying `marker`: a run's process whose pid was never
    recorded (its spawner died between the spawn and writing the pid)."""
    for pid in psutil.pids():
        try:
            if os.getsid(pid) != pid:
                continue
            proc = psutil.Process(pid)
            if _has_marker(proc, marker) and _running(proc):
                return ProcessRecord(pid, proc.create_time(), marker)
        except (OSError, psutil.Error):
            continue
    return None


def _running(proc: psutil.Process) -> bool:
    try:
        return bool(proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def _signal(scan: _Scan, sig: int) -> list[int]:
    """Signal each group once, then each member outside those groups; the pids reached."""
    sent: list[int] = []
    alone: list[psutil.Process] = []
    in_group: dict[int, list[int]] = {}
    # Read each member's group *before* the group signal: afterwards a member the signal
    # killed may already be reaped, and asking then (getpgid fails) would drop a pid the
    # signal did reach from the report. A member gone before this read was never signalled
    # by us and is not reported; it is gone, so it is not in `remaining` either.
    for proc in scan.procs:
        try:
            pgid = os.getpgid(proc.pid)
        except OSError:
            continue  # exited since the scan: not signalled, not alive
        if pgid in scan.groups:
            in_group.setdefault(pgid, []).append(proc.pid)
        else:
            alone.append(proc)
    for pgid in sorted(scan.groups):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            continue  # the whole group ended before the signal: none of it was reached
        # A second signal would run a trap twice; the group signal already reached these.
        sent.extend(in_group.get(pgid, []))
    for proc in alone:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(sig)
            sent.append(proc.pid)
    return sent


def _wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    # Not psutil.wait_procs: it reaps our own children, and then Popen loses their exit status.
    deadline = time.monotonic() + timeout
    delay = 0.002
    alive = [p for p in procs if _running(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(delay)  # runs in a worker thread, never on the event loop
        delay = min(delay * 2, 0.05)
        alive = [p for p in alive if _running(p)]
    return alive


async def kill_tree(
    record: ProcessRecord,
    sig: int = signal_module.SIGTERM,
    grace: float | None = None,
    *,
    policy: KillPolicy | None = None,
) -> KillReport:
    """Signal every member with `sig`; after the grace, SIGKILL what is left; verify none remain.

    `grace` None means the policy's (`DEFAULT_POLICY` unless one is given), read now. With
    `sig` SIGKILL the grace is skipped. A signal other than TERM/KILL (e.g. INT) is
    delivered and waited for the grace but not escalated: the caller asked for that signal.
    """
    policy = policy or DEFAULT_POLICY
    grace = policy.grace_seconds if grace is None else grace
    report = _report(record)
    import anyio.to_thread  # here: `members` serves a process without an event loop

    scan = await anyio.to_thread.run_sync(_scan, record)
    report.pids = _signal(scan, sig)
    escalate = sig in (signal_module.SIGTERM, signal_module.SIGKILL)
    if sig != signal_module.SIGKILL:
        gone_or_not = await anyio.to_thread.run_sync(_wait_gone, scan.procs, grace)
        if not escalate:
            report.remaining = [p.pid for p in gone_or_not]
            return report
    # Rescan: a member may have left its group or forked between the scan and the signal.
    for _ in range(3):
        survivors = await anyio.to_thread.run_sync(_scan, record)
        if not survivors.procs:
            # That scan is the one below: none remain (a run's end, where most often
            # nothing was left, scanned every process three times, not two).
            return report
        for pid in _signal(survivors, signal_module.SIGKILL):
            if pid not in report.pids:
                report.pids.append(pid)
        # The cgroup's kill reaches the members the scan could not tell from strangers too.
        if record.marker is not None and cgroup.group_kill(record.marker):
            report.pids.extend(p.pid for p in survivors.procs if p.pid not in report.pids)
        await anyio.to_thread.run_sync(_wait_gone, survivors.procs, policy.reap_seconds)
    report.remaining = [p.pid for p in await anyio.to_thread.run_sync(members, record)]
    return report


def _report(record: ProcessRecord) -> KillReport:
    if record.marker is not None and cgroup.group_pids(record.marker) is not None:
        return KillReport(tracking="cgroup")
    return KillReport(tracking="marker", untracked=cgroup.untracked_note())
