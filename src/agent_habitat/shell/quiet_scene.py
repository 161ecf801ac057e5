"""The scene of a workspace where nothing runs, read from `state.db` alone.

A one-shot `habitat scene` need not open the habitat (every service, every verb's model) to
read two tables when no run is marked running: then no run can have ended unseen and need
recording, and every tab is idle. `read_quiet_scene` returns that scene, or None whenever
the state needs the full path (a run marked running, an end not recorded in full, another
schema version, a database it cannot read) — which then does what the state needs.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..secrets import shown_command
from ..store.db import SCHEMA_VERSION
from .shells import resolve_shell

__all__ = [
    "QuietCaps",
    "QuietRun",
    "QuietScene",
    "QuietTab",
    "read_quiet_scene",
]


@dataclass(frozen=True)
class QuietRun:
    index: int
    command: str
    state: str
    exit_code: int | None
    duration_s: float


@dataclass(frozen=True)
class QuietTab:
    name: str
    shell: str
    state: str
    cwd: str
    pid: int | None
    last_run: QuietRun | None


@dataclass(frozen=True)
class QuietCaps:
    max_tabs: int
    history_rows: int
    output_cap_bytes: int


@dataclass(frozen=True)
class QuietScene:
    tabs: list[QuietTab]
    caps: QuietCaps


def read_quiet_scene(db: Path, caps: QuietCaps) -> QuietScene | None:
    """The scene from `db` with `caps`, or None when the full path must read it."""
    try:
        conn = sqlite3.connect(db.as_uri() + "?mode=rw", uri=True, timeout=10.0)
    except sqlite3.Error:
        return None
    try:
        conn.row_factory = sqlite3.Row
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            return None
        if conn.execute("SELECT 1 FROM runs WHERE state = 'running' LIMIT 1").fetchone():
            return None
        tabs = []
        for tab in conn.execute("SELECT * FROM tabs ORDER BY created_at, name").fetchall():
            run = conn.execute(
                "SELECT * FROM runs WHERE tab = ? ORDER BY idx DESC LIMIT 1", (tab["name"],)
            ).fetchone()
            last = None
            if run is not None:
                if run["ended_at"] is None:
                    return None  # an end not recorded in full: the full path knows why
                last = QuietRun(
                    index=run["idx"],
                    command=shown_command(run["command"]),
                    state=run["state"],
                    exit_code=run["exit_code"],
                    duration_s=round(max(0.0, run["ended_at"] - run["started_at"]), 3),
                )
            tabs.append(
                QuietTab(
                    name=tab["name"],
                    shell=resolve_shell(tab["shell"]).kind if tab["shell"] else "unknown",
                    cwd=tab["cwd"],
                    state="idle",
                    pid=None,
                    last_run=last,
                )
            )
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return QuietScene(tabs=tabs, caps=caps)
