"""Starting spool keepers (`spool_keeper.py`): one beside each run, out of the run's reach.

A keeper is its own process in its own session with an empty environment, so the run's
`kill` does not reach it and it holds no secrets. It forks once at start and its first
process exits at once: the habitat reaps that within milliseconds, and the keeper itself,
which lives as long as its run, is never a zombie of a habitat that outlives it.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

from . import spool_keeper
from .flocks import is_held
from .spool_keeper import Budget, lock_path, room, spool_dir_of

__all__ = ["KEEPER_AFTER_SECONDS", "keeper_alive", "keeper_before", "start_keeper"]

KEEPER_AFTER_SECONDS = 0.05
"""How long after its start a run gets its keeper (if it still writes): a short run none."""
# How long a habitat waits for a keeper it must have before the command starts.
_READY_SECONDS = 10.0
# What a writer at ~1 GB/s puts in its spool before a keeper started after it makes its
# first cut, with room to spare on a loaded machine.
_LATE_START_BYTES = 512 << 20


def keeper_before(output: Path, budget: Budget) -> int | None:
    """When the spool's disk is too short for a keeper that starts after the command (a
    small disk fills before it has started), start it first: returns a descriptor writing
    `output`, to close once the command holds its own (until then the keeper counts it as
    the writer it waits for). None when the disk has room: the keeper may start later.
    Blocks while the keeper starts (tens of milliseconds): call it off the event loop."""
    if room(spool_dir_of(output)) >= budget.run_bytes + _LATE_START_BYTES:
        return None
    holder = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    try:
        start_keeper(output, budget, ready=True)
    except OSError:
        os.close(holder)
        raise
    return holder


def start_keeper(output: Path, budget: Budget, *, ready: bool = False) -> bool:
    """Start the keeper of a run's `output`; with `ready`, return once it watches the file
    (it must then have a writer already, or it exits at once). False where the kernel cannot
    punch holes (not Linux): there the spool is not held to its budget. Raises OSError when
    the keeper cannot be started."""
    if not sys.platform.startswith("linux"):
        return False
    argv = [sys.executable, "-I", "-S", spool_keeper.__file__, os.fspath(output)]
    argv += [str(budget.run_bytes), str(budget.workspace_bytes)]
    keeper = subprocess.Popen(
        argv,
        cwd="/",
        env={},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if ready else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    keeper.wait()  # its first process only: it exits once it has forked the keeper
    if keeper.stdout is not None:
        with keeper.stdout:
            # The keeper closes its end once it watches the file (or once it has died).
            select.select([keeper.stdout], [], [], _READY_SECONDS)
    return True


def keeper_alive(output: str | Path) -> bool:
    """Whether a keeper holds `output` now (its lock is taken)."""
    return is_held(lock_path(output))
