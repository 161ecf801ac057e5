"""`history`, `last`, `which`, `wait` and `kill` of a workspace where nothing runs, read from
`state.db` alone.

When opening the habitat would record nothing (`settled.nothing_to_record`: the state at
this schema, no run marked running or without its recorded end), these verbs only read: a
tab's rows, a run's spool. Each reader here returns the result as the verb's model dumps it
to JSON (`model_dump(mode="json")`: the same keys in the same order), from the same pieces the
service uses (`secrets.shown_command`, `output.read_capped`, `error_lines.left_out`,
`shells`), or None whenever the full path must answer (a tab or run that is not there, whose
refusal the full path words). Standard library only: no pydantic, anyio or habitat, so a
one-shot `habitat history` with no host costs what it reads. Tests keep every answer equal
to the full path's.
"""

from __future__ import annotations

import sqlite3
import time

from ..secrets import remember_typed, shown_command

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

__all__ = ["quiet_history", "quiet_kill", "quiet_last", "quiet_wait", "quiet_which"]


def _command(row: sqlite3.Row) -> str:
    # As `run_store._run` loads a row: a secret typed in an earlier run stays a secret.
    remember_typed(row["command"])
    return shown_command(row["command"])


def _seconds(row: sqlite3.Row) -> float:
    """`RunRow.duration_s` of a run that ended (a quiet state has no other)."""
    end: float = row["ended_at"] if row["ended_at"] is not None else time.time()
    started: float = row["started_at"]
    return round(max(0.0, end - started), 3)


def _tab(conn: sqlite3.Connection, tab: str) -> sqlite3.Row | None:
    found: sqlite3.Row | None = conn.execute("SELECT * FROM tabs WHERE name = ?", (tab,)).fetchone()
    return found


def quiet_history(conn: sqlite3.Connection, tab: str, limit: int) -> dict[str, Any] | None:
    """`HistoryResult` of `tab`'s newest `limit` runs, oldest first."""
    if _tab(conn, tab) is None:
        return None
    rows = conn.execute(
        "SELECT * FROM runs WHERE tab = ? ORDER BY idx DESC LIMIT ?", (tab, limit)
    ).fetchall()
    shown = [
        {
            "index": row["idx"],
            "command": _command(row),
            "cwd": row["cwd"],
            "state": row["state"],
            "exit_code": row["exit_code"],
            "started_at": float(row["started_at"]),
            "duration_s": _seconds(row),
            "output_bytes": row["output_bytes"],
            "background": bool(row["background"]),
        }
        for row in reversed(rows)
    ]
    return {"tab": tab, "rows": shown}


def _newest(conn: sqlite3.Connection, tab: str) -> sqlite3.Row | None:
    """The tab's newest run (`RunStore.by_index(tab, None)`)."""
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM runs WHERE tab = ? ORDER BY idx DESC LIMIT 1", (tab,)
    ).fetchone()
    return row


def quiet_last(
    conn: sqlite3.Connection, tab: str, index: int | None, cap: int, since: int = 0
) -> dict[str, Any] | None:
    """`LastResult` of `tab`'s run `index` (default its last): its capped output."""
    if _tab(conn, tab) is None:
        return None
    if index is None:
        row = _newest(conn, tab)
    else:
        row = conn.execute("SELECT * FROM runs WHERE tab = ? AND idx = ?", (tab, index)).fetchone()
    if row is None:
        return None
    import os

    from .error_lines import left_out
    from .output import read_capped

    command = _command(row)
    output = os.path.join(row["run_dir"], "output")
    capped = read_capped(output, cap, since=since)
    errors = left_out(
        output, capped, row["state"], row["exit_code"], row["signal"], bool(row["timed_out"])
    )
    return {
        "tab": row["tab"],
        "index": row["idx"],
        "command": command,
        "state": row["state"],
        "running": row["state"] == "running",
        "exit_code": row["exit_code"],
        "signal": row["signal"],
        "output": capped.text,
        "omitted_bytes": capped.omitted_bytes,
        "output_bytes": capped.total_bytes,
        "cursor": capped.total_bytes,
        "spool": output,
        "error_lines": errors.lines,
        "error_lines_more": errors.more,
    }


def quiet_which(conn: sqlite3.Connection, tab: str) -> dict[str, Any] | None:
    """`WhichResult` of `tab`: its shell, its version, its cwd; idle (nothing runs)."""
    row = _tab(conn, tab)
    if row is None:
        return None  # the default tab before its first run: the full path knows its cwd
    from .shells import ask_version, resolve_shell

    shell = resolve_shell(row["shell"])
    return {
        "tab": tab,
        "shell": shell.kind,
        "executable": shell.executable,
        "version": ask_version(shell.executable),
        "cwd": row["cwd"],
        "pid": None,
        "state": "idle",
    }


def quiet_wait(conn: sqlite3.Connection, tab: str, cap: int) -> dict[str, Any] | None:
    """`WaitResult` of a wait with no pattern on `tab`, where nothing runs: its newest run's
    end at once (`exited`, its whole output capped), or `not_running` before its first run
    (`shell.views.wait`)."""
    if _tab(conn, tab) is None:
        return None
    row = _newest(conn, tab)
    if row is None:
        return {
            "tab": tab,
            "index": None,
            "reason": "not_running",
            "match": None,
            "state": None,
            "exit_code": None,
            "signal": None,
            "output": "",
            "cursor": 0,
        }
    import os

    from .output import read_capped

    capped = read_capped(os.path.join(row["run_dir"], "output"), cap)
    return {
        "tab": row["tab"],
        "index": row["idx"],
        "reason": "exited",
        "match": None,
        "state": row["state"],
        "exit_code": row["exit_code"],
        "signal": row["signal"],
        "output": capped.text,
        "cursor": capped.total_bytes,
    }


_LEFT_FILE = "left_running.json"  # `leftovers._FILE`


def quiet_kill(conn: sqlite3.Connection, tab: str, signal_name: str) -> dict[str, Any] | None:
    """`KillResult` of `kill` on `tab`, where nothing runs and no ended run of it left a
    process on record (`leftovers`: the full path looks whether those live and stops them):
    nothing to kill."""
    if _tab(conn, tab) is None:
        return None
    row = _newest(conn, tab)
    if row is not None:
        import json
        import os

        try:
            with open(os.path.join(row["run_dir"], _LEFT_FILE), encoding="utf-8") as file:
                left = json.load(file)
        except FileNotFoundError:
            left = []
        except (OSError, ValueError):
            return None
        if left:
            return None
    return {
        "tab": tab,
        "index": None,
        "killed": False,
        "pids": [],
        "signal": signal_name,
        "remaining": [],
        "tracking": "marker",  # `proc.kill.KillReport`'s, nothing looked for
        "untracked": None,
    }
