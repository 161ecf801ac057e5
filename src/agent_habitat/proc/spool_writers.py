"""Who writes a spool, for its keeper (`spool_keeper.py`): inotify on the file, and whether
any process still has it open for writing.

Standard library only, like the keeper that loads it by path.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import select
import struct
import sys

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["GONE", "IN_CLOSE_WRITE", "Watch", "open_elsewhere", "writers_gone"]

_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
_IN_MODIFY = 0x002
IN_CLOSE_WRITE = 0x008
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_IGNORED = 0x8000
GONE = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED
"""The file was removed or moved: its run's folder is gone."""


def writers_gone(output: str | Path) -> bool:
    """Whether no process has `output` open for writing (the kernel grants a read lease
    only then); True when the file is gone."""
    try:
        fd = os.open(output, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return True
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EBUSY):
            return False
        return not open_elsewhere(os.fstat(fd))  # leases refused here: look in /proc
    else:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        return True
    finally:
        os.close(fd)


def open_elsewhere(st: os.stat_result) -> bool:
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            try:
                other = os.stat(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                return True
    return False


class Watch:
    """inotify on one file: `wait()` returns the event mask seen (0 on a timeout)."""

    def __init__(self, output: str | Path) -> None:
        assert _libc is not None
        self.fd = _libc.inotify_init1(os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        mask = _IN_MODIFY | IN_CLOSE_WRITE | _IN_DELETE_SELF | _IN_MOVE_SELF
        if _libc.inotify_add_watch(self.fd, os.fsencode(output), mask) < 0:
            os.close(self.fd)
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {output}")

    def wait(self, timeout: float) -> int:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return 0
        data = os.read(self.fd, 64 * 1024)
        mask = 0
        offset = 0
        while offset + 16 <= len(data):
            _wd, event, _cookie, length = struct.unpack_from("iIII", data, offset)
            mask |= event
            offset += 16 + length
        return mask
