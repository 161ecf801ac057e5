"""Identity of a supervised process: enough to find it again after a restart."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..lazy import lazy_module

if TYPE_CHECKING:
    import psutil
else:
    psutil = lazy_module("psutil")  # proc/ calls it in a few places: loaded when one runs


__all__ = ["ProcessRecord", "is_alive", "process_create_time"]

# psutil's create_time is derived from boot time and clock ticks; two reads of the same
# process can differ in the last digits, so identity allows this much slack.
_CREATE_TIME_SLACK = 0.05


@dataclass(frozen=True)
class ProcessRecord:
    """A process we started: its pid, when it started, and the marker in its environment.

    The pid alone is not an identity (pids are reused); pid + create_time is. The marker
    (`HABITAT_RUN_ID`) is inherited by every descendant, even one that double-forked into a
    new session, which is how `kill_tree` finds them all.
    """

    pid: int
    create_time: float
    marker: str | None = None
    command: str | None = field(default=None, compare=False)
    """Its command line, when it was read (a run's members, to say what was left running)."""


def process_create_time(pid: int) -> float | None:
    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def is_alive(record: ProcessRecord) -> bool:
    """True while the very process of `record` runs (not a zombie, not a reused pid)."""
    try:
        proc = psutil.Process(record.pid)
        # create_time 0.0: recorded before it was known; the pid is all we have.
        if record.create_time and abs(proc.create_time() - record.create_time) > _CREATE_TIME_SLACK:
            return False
        return bool(proc.status() != psutil.STATUS_ZOMBIE)
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
