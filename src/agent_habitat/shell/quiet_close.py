"""`habitat close TAB` with no host, recorded in this process with the standard library.

Where nothing runs (`cli.quiet_state`) and the tab's ended runs left no process on record
(`leftovers`), closing a tab is what `Shell.close` does after it found nothing to kill: the
sweeps of `Shell.open`, the tab's rows deleted (`RunStore.delete_tab`), its run folders
removed (`run_folders.remove`), `shell.tab.closed` in the journal, and the `CloseResult`
as JSON data. A tab that is not there, or one with a process left on record, returns None:
the full path words the refusal, or stops what is left first.
"""

from __future__ import annotations

from pathlib import Path

from ..proc.spawner import ProcSpawner
from ..store.db import Database
from . import run_folders
from .journal_row import publish
from .quiet_run import left_file
from .run_store import RunStore

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

__all__ = ["quiet_close"]


def quiet_close(db_path: Path, *, label: str, spool_dir: Path, tab: str) -> dict[str, Any] | None:
    """Close `tab` (nothing runs in the workspace of `db_path`, at this schema): its
    `CloseResult` as JSON data, or None when the full path must answer."""
    db = Database(db_path)
    try:
        # As `Shell.open` does before anything (no run is marked running: none to adopt).
        run_folders.sweep(spool_dir)
        ProcSpawner().sweep()
        store = RunStore(db)
        if store.tab(tab) is None:
            return None
        newest = store.by_index(tab, None)
        if newest is not None and (newest.state == "running" or left_file(newest.run_dir)):
            return None  # the full path looks whether what it left lives, and stops it
        folders = store.delete_tab(tab)
        run_folders.remove(folders)
        with db.transaction() as conn:
            publish(conn, label, "shell.tab.closed", tab, {"killed": False})
        return {"tab": tab, "killed": False, "open_tabs": [row.name for row in store.tabs()]}
    finally:
        db.close()
