"""Small real disks for the tests of what happens when one fills: a tmpfs of a given size,
and a filler that takes all its room. Imported as `small_disks` (the root conftest puts
`tests/` on the path)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` (`4m`) mounted at `folder`; the test is skipped where it cannot
    be (mounting one needs root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    folder.mkdir(parents=True, exist_ok=True)
    mount = ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)]
    if subprocess.run(mount, check=False).returncode:
        pytest.skip("tmpfs could not be mounted here")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(disk: Path) -> Path:
    """Write `disk/filler` until the disk is full; returns its path (unlink it for room)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"\0" * 65536):
            pass
    except OSError:
        pass  # full
    finally:
        os.close(fd)
    return filler
