"""`host.lock`: one host per workspace, and how others find it.

The running host holds an exclusive `flock` on the file for its whole life and writes
its record (pid, endpoints) into it once it listens. The kernel drops the lock when the
process dies, however it dies, so a lock left by a dead host is simply free: the next
host takes it over and rewrites the record. A reader that can take the lock itself knows
no host runs, whatever the file says.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ValidationError

from agent_habitat.proc import flocks
from agent_habitat.proc.flocks import is_held

__all__ = ["HostLock", "HostRecord", "is_held", "read_record"]


class HostRecord(BaseModel):
    """What the running host says about itself in `host.lock`."""

    pid: int
    started_at: float
    socket: str
    tcp: str | None = None
    """`http://HOST:PORT` when the host also listens on TCP."""
    root: str | None = None


class HostLock:
    """The exclusive lock a host holds while it runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @classmethod
    def inherited(cls, path: Path, fd: int) -> HostLock:
        """The lock its starter took and handed over as descriptor `fd` (`launcher.spawn_host`):
        held from before this process began, so no client ever sees the workspace without a
        host while it starts."""
        if os.fstat(fd).st_ino != os.stat(path).st_ino:
            raise OSError(f"descriptor {fd} is not {path}")
        os.set_inheritable(fd, False)  # runs the host spawns outlive it; the lock must not
        lock = cls(path)
        lock._fd = fd
        return lock

    def acquire(self) -> bool:
        """Take the lock; False when another live host holds it. A reader probing the lock
        at that moment only delays it (`proc.flocks`)."""
        # Close-on-exec: runs the host spawns outlive it; the lock must not.
        fd = flocks.take(self.path)
        if fd is None:
            return False
        os.ftruncate(fd, 0)
        self._fd = fd
        return True

    def publish(self, record: HostRecord) -> None:
        """Write the record; readers see a host once this returns."""
        assert self._fd is not None, "publish() before acquire()"
        data = record.model_dump_json().encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)
        os.fsync(self._fd)

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None


def read_record(path: Path) -> HostRecord | None:
    """The running host's record; None when no host runs or it is still starting."""
    if not is_held(path):
        return None
    try:
        text = path.read_text(encoding="utf-8")
        return HostRecord.model_validate_json(text) if text else None
    except (FileNotFoundError, ValidationError):
        return None
