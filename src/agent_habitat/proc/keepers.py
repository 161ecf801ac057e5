"""Starting spool keepers (`spool_keeper.py`): one beside each run, out of the run's reach.

A keeper is its own process in its own session with an empty environment, so the run's
`kill` does not reach it and it holds no secrets. It forks once at start and its first
process exits at once: the habitat reaps that within milliseconds, and the keeper itself,
which lives as long as its run, is never a zombie of a habitat that outlives it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import subprocess
import sys
from pathlib import Path

from . import spool_keeper
from .flocks import is_held
from .spool_keeper import Budget, lock_path, room, spool_dir_of

__all__ = [
    "KEEPER_AFTER_SECONDS",
    "drained",
    "keeper_alive",
    "keeper_before",
    "pump_needed",
    "start_keeper",
]

KEEPER_AFTER_SECONDS = 0.05
"""How often a rung's spool is looked at for a keeper (`verify.command`): a run that has
written a share of its budget gets one; a short or quiet run none."""
# How long a habitat waits for a keeper it must have before the command starts.
_READY_SECONDS = 10.0
# What a writer at ~1 GB/s puts in its spool before a keeper started after it makes its
# first cut, with room to spare on a loaded machine.
_LATE_START_BYTES = 512 << 20
# A pump's pipe (the most an unprivileged process may ask for by default).
_PIPE_BYTES = 1 << 20
# How long a run's end waits for its pump to copy what is left in the pipe.
_DRAIN_SECONDS = 2.0
_DRAIN_POLL_SECONDS = 0.005


def pump_needed(output: Path, budget: Budget) -> bool:
    """Whether `keeper_before` would start a pump for `output`: its disk is too short for a
    keeper that starts late (one `statvfs`, quick enough for the event loop), on Linux."""
    if not sys.platform.startswith("linux"):
        return False
    return room(spool_dir_of(output)) < budget.run_bytes + _LATE_START_BYTES


def keeper_before(output: Path, budget: Budget) -> int | None:
    """When the spool's disk is too short for a keeper that starts after the command (a
    small disk fills before it has started), start it first, as the run's **pump**: returns
    the write end of a pipe for the command's stdout and stderr, which the keeper copies
    into `output`, cutting before each write the disk could not take, so a fast writer waits
    on the pipe instead of failing with ENOSPC. Pass it to the command and close it once the
    command holds it (`drained` then waits for the copy to finish). None when the disk has
    room, or where holes cannot be punched: the command writes `output` itself. Blocks while
    the keeper starts (tens of milliseconds): call it off the event loop."""
    if not pump_needed(output, budget):
        return None
    read_end, write_end = os.pipe()
    try:
        with contextlib.suppress(OSError):  # a smaller pipe only means more, shorter copies
            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        start_keeper(output, budget, ready=True, source=read_end)
        if not keeper_alive(output):
            raise OSError(f"the spool keeper of {output} did not start")
    except OSError:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    return write_end


async def drained(output: Path, within: float = _DRAIN_SECONDS) -> bool:
    """Wait until a pumping keeper (`keeper_before`) has copied everything its run wrote: it
    exits at the pipe's end, once no process of the run holds it. False when something
    the run left running (a daemon) still holds the pipe after `within`: its later output
    arrives in the spool as it writes it."""
    import anyio  # here: a one-shot run with no host starts a keeper without it

    deadline = anyio.current_time() + within
    # A lock's release sends no event: a short bounded poll (the keeper is done within
    # milliseconds of its run's last close).
    while keeper_alive(output):
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(_DRAIN_POLL_SECONDS)
    return True


def start_keeper(
    output: Path, budget: Budget, *, ready: bool = False, source: int | None = None
) -> bool:
    """Start the keeper of a run's `output`; with `ready`, return once it watches the file
    (it must then have a writer already, or it exits at once). With `source` (a pipe's read
    end) it pumps the pipe into `output` instead. False where the kernel cannot punch holes
    (not Linux): there the spool is not held to its budget. Raises OSError when the keeper
    cannot be started."""
    if not sys.platform.startswith("linux"):
        return False
    argv = [sys.executable, "-I", "-S", spool_keeper.__file__, os.fspath(output)]
    argv += [str(budget.run_bytes), str(budget.workspace_bytes)]
    if source is not None:
        argv.append("pump")
    keeper = subprocess.Popen(
        argv,
        cwd="/",
        env={},
        stdin=subprocess.DEVNULL if source is None else source,
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
