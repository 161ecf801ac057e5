"""Idle priority for a process that must never slow anything down (the background test
dependency recording): the CPU scheduler's idle class, the lowest nice value, the idle
I/O class. Children it forks afterwards inherit all three.

Each is best effort and said: SCHED_IDLE and the I/O class are Linux's; macOS gets the
nice value only. Set from the parent right after the spawn, before the child (a Python
interpreter starting) has forked anything.
"""

from __future__ import annotations

import os

import psutil

__all__ = ["make_idle"]


def make_idle(pid: int) -> list[str]:
    """Lower `pid` to idle priority; what was applied, e.g. `["SCHED_IDLE", "nice 19"]`."""
    applied: list[str] = []
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
