"""A workspace's `state.db`, opened in this process when no host serves it and opening the
habitat would do nothing more than read it.

That is the case when no configuration is set (nothing to validate, no cap changed:
`scene_fast.configured`), the state folder is the user's own, no warm daemon left its status
(closing the habitat would stop it: `habitat._release_warm`), and the state needs nothing
done (`shell.settled.nothing_to_record`: at this schema, no run marked running or without
its recorded end). A run that a habitat now gone left running is adopted, or marked lost, by
the next command that opens the habitat: this returns None for it, and the command takes the
full path, which does that first. The readers of `habitat events` (`cli.events_fast`), of
`history`, `last`, `which`, `wait` and `kill` (`cli.quiet_verbs`), `run` and `rerun`
(`cli.quiet_run`) and of `cancel` (`cli.verify_quiet`, whose full path opens no shell, so
runs do not matter to it) take the state from here.
"""

from __future__ import annotations

import os
import sqlite3

__all__ = ["quiet_state"]

_DB_NAME = "state.db"  # `workspace.Workspace.db_path` (a test keeps them one)


_WARM = (("dmypy", "status.json"), ("pytest-warm", "status.json"))
_WARM_FOLDER = "checker-warm"  # its `*.json`


def _warm_left(state: str) -> bool:
    """Whether a warm daemon's status is in the state folder (the full path releases it)."""
    if any(os.path.exists(os.path.join(state, *parts)) for parts in _WARM):
        return True
    try:
        names = os.listdir(os.path.join(state, _WARM_FOLDER))
    except OSError:
        return False
    return any(name.endswith(".json") for name in names)


def _uri_path(path: str) -> str:
    """`path` in an SQLite URI: the characters a URI gives a meaning escaped (`pathlib`'s
    `as_uri` would do it, at the cost of importing it)."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def quiet_state(root: str, *, shell: bool = True) -> sqlite3.Connection | None:
    """The state of the workspace at `root` (no host serves it), open read-write as the
    full path opens it, or None when that path must answer. `shell=False`: for a command
    whose full path opens no shell (no run of it is looked at), the schema alone matters."""
    from .. import state_place
    from ..shell.settled import at_schema, nothing_to_record
    from .scene_fast import configured

    state = state_place.state_dir(root)
    db_path = os.path.join(state, _DB_NAME)
    try:
        if configured(root) or _warm_left(state):
            return None
        for path in (state_place.habitat_home(), state, db_path):
            if state_place.open_to_others(os.lstat(path)):
                return None  # the full path refuses it and says why
        if not os.path.isfile(db_path):
            return None
        db = sqlite3.connect(f"file:{_uri_path(db_path)}?mode=rw", uri=True, timeout=10)
    except (OSError, sqlite3.Error):
        return None
    try:
        if nothing_to_record(db) if shell else at_schema(db):
            db.row_factory = sqlite3.Row
            return db
    except sqlite3.Error:
        pass
    db.close()
    return None
