"""Removing run folders so that none is left behind, however late their writers are.

A run folder still has writers after its run's row is gone: its spool keeper (a process of
its own session, started 50 ms into the run) takes `keeper.lock` and writes the hole record
and its spare, and a wrapper writes `state` as its shell exits. `shutil.rmtree` lists the
folder, unlinks what it listed, then removes the folder: a file made in between made the
last step fail (ENOTEMPTY, ignored), and the folder stayed for good. Closing a tab of
`exec yes` under load left it 9 times in 30 (`keeper.lock`, made by a keeper whose start
the close had overtaken). So the folder is first renamed out of the way (`gone-<pid>-<name>`
in the same spool folder, one rename): every writer opens its files by their path under
`run-<id>`, which no longer resolves, so nothing new appears in the folder being removed;
then it is removed. What a dying habitat left renamed, `sweep` removes at the next start.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

__all__ = ["new_folder", "remove", "sweep"]

_GONE = "gone-"
# A file made by a call that had resolved the folder's old path before the rename: removing
# again finds it. More passes than that would take a writer that is not there.
_PASSES = 3


def remove(folders: list[Path]) -> None:
    """Remove these run folders and all they hold (blocking: a loud run's spool takes
    hundreds of milliseconds to unlink; a worker thread's job)."""
    for folder in folders:
        doomed = folder.with_name(f"{_GONE}{os.getpid()}-{folder.name}")
        try:
            os.rename(folder, doomed)
        except FileNotFoundError:
            continue  # removed already (or never made)
        except OSError:
            doomed = folder  # cannot rename (a leftover `gone-` of the same name): in place
        for _ in range(_PASSES):
            shutil.rmtree(doomed, ignore_errors=True)
            if not os.path.lexists(doomed):
                break


def sweep(spool_dir: Path) -> None:
    """Remove the folders `remove` renamed but a dying habitat did not remove."""
    gone: list[Path] = []
    with contextlib.suppress(OSError), os.scandir(spool_dir) as entries:
        gone = [Path(entry.path) for entry in entries if entry.name.startswith(_GONE)]
    for folder in gone:
        shutil.rmtree(folder, ignore_errors=True)


def new_folder(folder: Path) -> None:
    """Make the run's folder, private. The id is new, so is its folder: whatever is there
    (a state.db deleted under a spool kept) belongs to no run of this database and goes."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        shutil.rmtree(folder, ignore_errors=True)
        os.mkdir(folder, 0o700)
    except FileNotFoundError:  # the spool folder itself is gone
        folder.mkdir(mode=0o700, parents=True)
