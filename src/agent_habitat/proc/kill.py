"""Kill a supervised process and everything it started — the one place that owns killing.

Members of a run are found three ways, because each alone misses some:
* its session (the run is a session leader; children and double-forked grandchildren
  stay in it unless they call setsid),
* its descendants by parent link (covers children that called setsid but are not orphaned),
* the `HABITAT_RUN_ID` marker in the environment (covers daemons that double-forked *and*
  called setsid: they were reparented to init, but they inherited the environment).
"""

from __future__ import annotations

import contextlib
import os
import signal as signal_module
import time
from dataclasses import dataclass, field

import anyio
import anyio.to_thread
import psutil

from .record import ProcessRecord
from .supervised import MARKER_ENV

__all__ = ["GRACE_SECONDS", "KillReport", "kill_tree", "members"]

# How long SIGTERM gets before SIGKILL. Tests shorten it through the argument.
GRACE_SECONDS = 2.0
# After SIGKILL the kernel still has to tear processes down; this bounds our verification.
_REAP_SECONDS = 2.0
# Two reads of one process's start time agree within this (see record.py).
_SAME_START = 0.05


@dataclass
class KillReport:
    pids: list[int] = field(default_factory=list)
    """Every pid that was signalled."""
    remaining: list[int] = field(default_factory=list)
    """Pids still alive at the end (should be empty)."""
    escalated: bool = False
    """True when SIGKILL was needed after the grace period."""


def _has_marker(proc: psutil.Process, marker: str) -> bool:
    try:
        return bool(proc.environ().get(MARKER_ENV) == marker)
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
        return False


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


def members(record: ProcessRecord) -> list[psutil.Process]:
    """Live processes belonging to the run of `record` (never this process or its parents)."""
    exclude = {os.getpid()}
    with contextlib.suppress(psutil.Error):
        exclude.update(p.pid for p in psutil.Process().parents())
    leader, session_is_ours = _leader(record)
    found: dict[int, psutil.Process] = {}
    for proc in psutil.process_iter():
        pid = proc.pid
        if pid in exclude:
            continue
        try:
            in_session = session_is_ours and os.getsid(pid) == record.pid
        except OSError:
            continue
        if in_session or (record.marker is not None and _has_marker(proc, record.marker)):
            found[pid] = proc
    if leader is not None:
        found[leader.pid] = leader
        with contextlib.suppress(psutil.Error):
            for child in leader.children(recursive=True):
                found.setdefault(child.pid, child)
    return [p for p in found.values() if _running(p)]


def _running(proc: psutil.Process) -> bool:
    try:
        return bool(proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def _signal_all(procs: list[psutil.Process], sig: int) -> list[int]:
    sent: list[int] = []
    for proc in procs:
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
    record: ProcessRecord, sig: int = signal_module.SIGTERM, grace: float = GRACE_SECONDS
) -> KillReport:
    """Signal every member with `sig`; after `grace`, SIGKILL what is left; verify none remain.

    With `sig` SIGKILL the grace is skipped. A signal other than TERM/KILL (e.g. INT) is
    delivered and waited for `grace` but not escalated: the caller asked for that signal.
    """
    report = KillReport()
    procs = await anyio.to_thread.run_sync(members, record)
    report.pids = _signal_all(procs, sig)
    escalate = sig in (signal_module.SIGTERM, signal_module.SIGKILL)
    if sig != signal_module.SIGKILL:
        procs = await anyio.to_thread.run_sync(_wait_gone, procs, grace)
        if not escalate:
            report.remaining = [p.pid for p in procs]
            return report
    # Rescan: a member may have forked between the scan and the signal.
    for _ in range(3):
        survivors = await anyio.to_thread.run_sync(members, record)
        if not survivors:
            break
        report.escalated = True
        for pid in _signal_all(survivors, signal_module.SIGKILL):
            if pid not in report.pids:
                report.pids.append(pid)
        await anyio.to_thread.run_sync(_wait_gone, survivors, _REAP_SECONDS)
    report.remaining = [p.pid for p in await anyio.to_thread.run_sync(members, record)]
    return report
