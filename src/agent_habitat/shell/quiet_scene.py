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

from ..secrets import remember_typed, shown_command
from ..store.db import SCHEMA_VERSION
from .shells import resolve_shell

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "QuietCaps",
    "QuietRun",
    "QuietScene",
    "QuietTab",
    "quiet_scene_data",
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
    run_dir: str | None = None
    """The folder of its last run (`--json` reads its preview and what it left there)."""


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
                remember_typed(run["command"])  # as `run_store._run` loads the row
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
                    run_dir=None if run is None else run["run_dir"],
                )
            )
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return QuietScene(tabs=tabs, caps=caps)


_LEFT_FILE = "left_running.json"  # `leftovers._FILE`


def quiet_scene_data(scene: QuietScene, preview_bytes: int) -> dict[str, Any] | None:
    """`SceneResult` as its model dumps it to JSON: each tab's preview (the tail of its last
    run's output, as `scene._read` reads it), or None when a tab's runs left a process on
    record (the full path looks whether it lives)."""
    import os

    from ..proc.spool import Spool
    from ..secrets import secret_values
    from .output import read_capped

    secrets = secret_values()
    tabs: list[dict[str, Any]] = []
    for tab in scene.tabs:
        preview = ""
        if tab.run_dir is not None:
            if os.path.exists(os.path.join(tab.run_dir, _LEFT_FILE)):
                return None
            output = os.path.join(tab.run_dir, "output")
            since = max(0, Spool(output).size() - preview_bytes)
            preview = read_capped(output, preview_bytes, since=since, secrets=secrets).text
        run = tab.last_run
        tabs.append(
            {
                "name": tab.name,
                "shell": tab.shell,
                "cwd": tab.cwd,
                "state": tab.state,
                "pid": tab.pid,
                "last_run": None
                if run is None
                else {
                    "index": run.index,
                    "command": run.command,
                    "state": run.state,
                    "exit_code": run.exit_code,
                    "duration_s": run.duration_s,
                },
                "preview": preview,
                "left_running": [],
            }
        )
    caps = scene.caps
    return {
        "tabs": tabs,
        "caps": {
            "max_tabs": caps.max_tabs,
            "history_rows": caps.history_rows,
            "output_cap_bytes": caps.output_cap_bytes,
            "preview_bytes": preview_bytes,
        },
    }
