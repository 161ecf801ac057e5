"""Writing a file so that a reader sees the old bytes or the new ones, never a mix.

The new bytes go to a temporary file in the same folder (so the rename stays on one file
system), are flushed to disk, and the temporary file is renamed over the target. On any
failure the temporary file is removed and the target is untouched.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

__all__ = ["TEMP_SUFFIX", "write_atomic", "write_project_file"]

TEMP_SUFFIX = ".habitat-tmp"
"""Temporary files end with this; a crash between create and rename can leave one."""


def write_atomic(
    target: Path, data: bytes, mode: int | None, before_replace: Callable[[], None] | None = None
) -> None:
    """Replace `target` with `data`; `mode` None means a new file (permissions from the umask).
    `before_replace` runs just before the rename; what it raises leaves the target untouched."""
    import secrets  # here: `habitat init` loads this module on its way to a write

    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
    # 0o666 lets the umask decide a new file's permissions, as any editor would.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if before_replace is not None:
            before_replace()
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _sync_folder(target.parent)


def write_project_file(target: Path, data: bytes, *, existed: bool) -> None:
    """Write a file the user owns (a client config, a rules file): an existing one keeps its
    permissions, a new one gets its folder and the umask's."""
    if existed:
        write_atomic(target, data, stat.S_IMODE(os.stat(target).st_mode))
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, data, None)


def _sync_folder(folder: Path) -> None:
    # The rename itself is durable only once the folder's entry is on disk.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a folder; the rename still happened
    finally:
        os.close(fd)
