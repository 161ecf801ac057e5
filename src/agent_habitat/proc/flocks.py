"""Whole-file `flock` locks that mark a live owner: a host's `host.lock`, a keeper's
`keeper.lock`.

The owner holds `LOCK_EX` for its whole life and the kernel drops it when the owner dies,
however it dies. Anyone else asks whether it is held by taking `LOCK_SH` for an instant.
That instant is the catch: an owner that takes its lock while a prober holds it would find
it taken and give up, leaving nobody to own it (a host that exits "already running" while
no host runs). So an owner is patient: it tries again for a while before it believes that
another owner holds the lock. A prober holds it for microseconds (tens of milliseconds when
a loaded machine preempts it); a real owner holds it for good.

Standard library only: the spool keeper, run by path, imports it too.
"""

from __future__ import annotations

import fcntl
import os
import time

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["PATIENCE_SECONDS", "fd_is_held", "is_held", "take"]

PATIENCE_SECONDS = 2.0
"""How long an owner keeps trying a lock it found taken before it believes an owner has it."""


def fd_is_held(fd: int) -> bool:
    """True when a live process holds the lock on the file open at `fd`."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False


def is_held(path: str | Path) -> bool:
    """True when a live process holds the lock at `path`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        return fd_is_held(fd)
    finally:
        os.close(fd)


def take(path: str | Path, *, patience: float = PATIENCE_SECONDS) -> int | None:
    """Take the lock at `path` for good: a close-on-exec descriptor holding `LOCK_EX`
    (processes its owner spawns never inherit it), or None when another owner holds it.
    Tries again for `patience` seconds while the lock is taken (by a prober, most likely)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + patience
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(pause)  # pacing the retries of a lock nobody can wait on
            pause = min(pause * 2, 0.05)
        else:
            return fd
