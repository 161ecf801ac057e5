"""`habitat events` read from the journal in `state.db` with the standard library alone.

The workspace's journal is a table of `state.db` (SQLite, WAL): while a host runs, the
database is at its schema; with no host, when nothing needs doing (no configuration to check,
the state at this schema, no run marked running or without its recorded end: opening the
habitat would record nothing, `shell.quiet_scene`), the journal is what it would print. Then
the events a person asks for are read straight from the table, in this process, without
building the habitat (`cli.events_cmd`) to read one table. The lines and the `--json`
objects are those of `cli.events_cmd`. Otherwise (`--follow` with no host, whose habitat
records what ends meanwhile), or for any command line this reader does not take plainly, the
full path answers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sqlite3
import sys
import time
from pathlib import Path

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any, NoReturn

__all__ = ["fast_events"]

# As `cli.events_cmd`: how often --follow looks, and how many events one look reads.
_FOLLOW_POLL_SECONDS = 0.2
_BATCH = 1000


class _Refused(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Refused(message)


def _line(row: sqlite3.Row, data: dict[str, Any]) -> str:
    ts = datetime.datetime.fromtimestamp(row["ts"]).strftime("%H:%M:%S.%f")[:-3]
    where = f" tab={row['tab']}" if row["tab"] else ""
    where += f" task={row['task']}" if row["task"] else ""
    said = " ".join(f"{k}={v}" for k, v in data.items() if v is not None)
    return f"{row['id']:>6} {ts} {row['kind']}{where} {said}"


def _as_json(row: sqlite3.Row, data: dict[str, Any]) -> str:
    event = {
        "id": row["id"],
        "ts": row["ts"],
        "kind": row["kind"],
        "workspace": row["workspace"],
        "task": row["task"],
        "tab": row["tab"],
        "data": data,
    }
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


def _journal(args: argparse.Namespace) -> sqlite3.Connection | None:
    """The workspace's `state.db` to read the journal from, or None for the full path."""
    from ..errors import HabitatError
    from ..reach.files import HostFiles
    from ..reach.plain_client import live_host
    from ..workspace import Workspace, find_project_root, habitat_home, refuse_unsafe
    from .quiet_state import quiet_state

    try:
        if args.project is not None and not args.project.is_dir():
            return None  # the full path names the bad flag
        root = args.project.resolve() if args.project is not None else find_project_root()
        workspace = Workspace.for_project(root)
        files = HostFiles(workspace)
        for path in (habitat_home(), workspace.state_dir, workspace.db_path, files.lock):
            if path.exists():
                refuse_unsafe(path)
        if not workspace.db_path.is_file():
            return None
        if live_host(files.lock) is None:
            # No host: read as `habitat history` reads, when nothing needs doing.
            return None if args.follow else quiet_state(str(root))
        # Read-only while the host keeps the WAL open.
        db = sqlite3.connect(f"file:{workspace.db_path}?mode=ro", uri=True, timeout=10)
    except (OSError, HabitatError, sqlite3.Error):
        return None
    db.row_factory = sqlite3.Row
    return db


def fast_events(argv: list[str]) -> int | None:
    """Print the events and return 0, or None when the full path must answer."""
    if any(word in ("-h", "--help") for word in argv[1:]):
        return None
    parser = _Parser(prog="habitat events", add_help=False)
    parser.add_argument("--since", type=int, default=0)
    parser.add_argument("--follow", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--project", type=Path)
    try:
        args = parser.parse_args(argv[1:])
    except (_Refused, argparse.ArgumentError):
        return None
    db = _journal(args)
    if db is None:
        return None
    cursor: int = args.since
    try:
        while True:
            rows = db.execute(
                "SELECT * FROM events WHERE id > ? ORDER BY id LIMIT ?", (cursor, _BATCH)
            ).fetchall()
            for row in rows:
                data = json.loads(row["data_json"])
                print(_as_json(row, data) if args.json else _line(row, data), flush=True)
                cursor = row["id"]
            if not args.follow:
                return 0
            time.sleep(_FOLLOW_POLL_SECONDS)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader left (`| head`): as `cli.events_cmd` ends, exit 0
        sys.stderr.close()
        return 0
    finally:
        db.close()
