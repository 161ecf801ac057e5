"""Opening a project's files only when they are regular files.

A project is untrusted ground: it can hold a FIFO (opening it for reading blocks until a
writer comes, forever if none does, and the blocked thread cannot be cancelled), a socket,
a device node (opening some has side effects) or, for a folder such as `/`, `/proc` files
that never end. Whatever reads a project's content asks here first: the path's type is
checked with `lstat` before anything opens it, the open itself never blocks
(`O_NONBLOCK`), and the opened descriptor is checked again, so a file swapped for a FIFO
between the two steps is refused too.
"""

from __future__ import annotations

import fcntl
import io
import os
import stat
from pathlib import Path

from .errors import UsageError

__all__ = ["NotRegularFileError", "is_special", "kind_of", "open_regular", "read_regular"]


class NotRegularFileError(UsageError, OSError):
    """The path is a FIFO, socket or device: the habitat never opens one.

    An OSError too, so code that treats an unreadable file as absent treats this one so."""


_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISLNK, "a symlink"),
)


def kind_of(mode: int) -> str:
    """What a file of this `st_mode` is, in words ("a FIFO (named pipe)", …)."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def is_special(path: Path) -> bool:
    """True for a FIFO, socket or device node (never follows a symlink, never blocks)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


def _refusal(label: str, mode: int) -> NotRegularFileError:
    return NotRegularFileError(
        f"{label} is {kind_of(mode)}, not a regular file; the habitat reads and writes regular "
        "files only: remove it or move it out of the project"
    )


def open_regular(path: Path, label: str | None = None) -> io.BufferedReader:
    """`path` opened for binary reading, or NotRegularFileError naming it (symlinks followed).

    FileNotFoundError and other OSErrors pass through as `open` raises them.
    """
    label = label or str(path)
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise _refusal(label, mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _refusal(label, mode)
        # Reads of a regular file never block anyway; clear the flag so nothing surprises.
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, label: str | None = None) -> bytes:
    """The whole content of the regular file `path` (see `open_regular`)."""
    with open_regular(path, label) as f:
        return f.read()
