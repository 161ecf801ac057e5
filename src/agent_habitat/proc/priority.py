"""Lower CPU priority for what must not slow the habitat down.

`make_idle`: a process that must never slow anything down (the background test
dependency recording): the CPU scheduler's idle class, the lowest nice value, the idle
I/O class, and, when it leads a session of its own, its session's autogroup at nice 19
(else the group weighs as much as the host's against every other, whatever its one task's
class). Children it forks afterwards inherit all of them. Set from the parent right after
the spawn, before the child (a Python interpreter starting) has forked anything.

`make_background`: a long run of a tab, so that tabs printing or computing flat out leave
the host (and its callers) their turn. Each run is a session of its own, and where Linux
groups the scheduler's tasks by session (autogroups, `/proc/sys/kernel/sched_autogroup_enabled`)
a process's own nice only weighs it against its session's other processes: the session's
group gets the nice too (`/proc/PID/autogroup`, sched(7)). Children forked later inherit both.

`background_for_now`: a start that must give way to what a user waits on (the warm-up's
checkers, issue 27), and then answer at normal priority: the session's autogroup is lowered
and put back afterwards (raising a group's nice back to 0 needs no privilege); without
autogroups the process's own nice is lowered, and that stays.

Each is best effort and said: SCHED_IDLE, autogroups and the I/O class are Linux's; macOS
gets the nice value only. A priority is only ever lowered here, never raised above what it
was.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..lazy import lazy_module

if TYPE_CHECKING:
    import psutil
else:
    psutil = lazy_module("psutil")  # proc/ calls it in a few places: loaded when one runs


__all__ = ["background_for_now", "make_background", "make_idle"]


def make_idle(pid: int) -> list[str]:
    """Lower `pid` to idle priority; what was applied, e.g. `["autogroup nice 19",
    "SCHED_IDLE", "nice 19"]`."""
    applied: list[str] = []
    if _autogroup_to(pid, 19) is not None:
        applied.append("autogroup nice 19")
    sched_idle = getattr(os, "SCHED_IDLE", None)
    if sched_idle is not None:
        try:
            os.sched_setscheduler(pid, sched_idle, os.sched_param(0))
            applied.append("SCHED_IDLE")
        except OSError:
            pass
    try:
        os.setpriority(os.PRIO_PROCESS, pid, 19)
        applied.append("nice 19")
    except OSError:
        pass
    idle_io = getattr(psutil, "IOPRIO_CLASS_IDLE", None)
    if idle_io is not None:
        try:
            psutil.Process(pid).ionice(idle_io)
            applied.append("ionice idle")
        except (psutil.Error, OSError, ValueError):
            pass
    return applied


def make_background(pids: list[int], nice: int) -> list[str]:
    """Lower the processes `pids` (one run's) to at least `nice`, their sessions' groups
    too; what was applied, e.g. `["autogroup nice 5", "nice 5 (3 processes)"]`."""
    groups: set[str] = set()
    lowered = 0
    for pid in pids:
        group = _autogroup_to(pid, nice)
        if group is not None:
            groups.add(group)
        try:
            if os.getpriority(os.PRIO_PROCESS, pid) < nice:
                os.setpriority(os.PRIO_PROCESS, pid, nice)
            lowered += 1
        except OSError:  # gone meanwhile, or not ours
            continue
    applied = [f"autogroup nice {nice}"] if groups else []
    if lowered:
        applied.append(f"nice {nice} ({lowered} process{'es' if lowered > 1 else ''})")
    return applied


def background_for_now(pid: int, nice: int) -> tuple[str, Callable[[], None]]:
    """Lower `pid` (the leader of a session of its own) to `nice` for now: what was applied,
    and the function that puts it back where it can be put back."""
    path = f"/proc/{pid}/autogroup"
    group = _autogroup(path)
    own = _autogroup("/proc/self/autogroup")
    if group is not None and (own is None or group[0] != own[0]) and group[1] < nice:
        before = group[1]

        def put_back() -> None:
            _write(path, before)

        if _write(path, nice):
            return f"autogroup nice {nice} while it starts", put_back
    try:
        if os.getpriority(os.PRIO_PROCESS, pid) < nice:
            os.setpriority(os.PRIO_PROCESS, pid, nice)
        return f"nice {nice} (no autogroups: it stays)", lambda: None
    except OSError:  # gone meanwhile
        return "", lambda: None


def _write(path: str, nice: int) -> bool:
    try:
        with open(path, "w", encoding="ascii") as f:
            f.write(str(nice))
        return True
    except OSError:
        return False


def _autogroup_to(pid: int, nice: int) -> str | None:
    """Its session's autogroup (`/autogroup-123`) once at `nice` or lower priority; None
    where there are no autogroups (or it is gone). Raising a group's nice needs no privilege."""
    path = f"/proc/{pid}/autogroup"
    group = _autogroup(path)
    if group is None or group[0] == (_autogroup("/proc/self/autogroup") or ("", 0))[0]:
        return None  # none, or our own session's group: lowering it would lower the host too
    name, current = group
    if current < nice:
        try:
            with open(path, "w", encoding="ascii") as f:
                f.write(str(nice))
        except OSError:
            return None
    return name


def _autogroup(path: str) -> tuple[str, int] | None:
    """`("/autogroup-123", 0)` from a `/proc/PID/autogroup`; None where it is gone, or empty:
    the kernel prints nothing for a task whose cgroup has the cpu controller (a container's),
    as the scheduler then groups by cgroup, not by session."""
    try:
        with open(path, encoding="ascii") as f:
            name, _, current = f.read().split()  # "/autogroup-123 nice 0"
        return name, int(current)
    except (OSError, ValueError):  # ValueError: empty, or not the three words
        return None
