"""Whether a workspace's state needs anything done before it is read: standard library only
(no `pathlib`, no `dataclasses`), for the CLI's readers of `state.db` (`cli.quiet_state`)."""

from __future__ import annotations

import sqlite3

from ..store.db import SCHEMA_VERSION

__all__ = ["at_schema", "nothing_to_record"]


def at_schema(conn: sqlite3.Connection) -> bool:
    """True when the state is at this habitat's schema (opening it migrates nothing)."""
    return bool(conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION)


def nothing_to_record(conn: sqlite3.Connection) -> bool:
    """True when opening the habitat over this state would record nothing: it is at this
    habitat's schema, and no run is marked running or lacks its recorded end."""
    if not at_schema(conn):
        return False
    unsettled = "SELECT 1 FROM runs WHERE state = 'running' OR ended_at IS NULL LIMIT 1"
    return conn.execute(unsettled).fetchone() is None
