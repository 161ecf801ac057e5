"""The warm checkers' status files (`checker-warm/*.json`, one per server, written by
`warm_checker.WarmChecker` from its spawn): which are live, and the lines `habitat status`
prints of them. Reading them needs no server, no event loop and no ladder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...proc import ProcessRecord, is_alive
from ...workspace import Workspace

__all__ = ["STATUS_DIR", "describe", "live", "statuses"]

STATUS_DIR = "checker-warm"


def statuses(workspace: Workspace) -> list[tuple[dict[str, Any], Path]]:
    """Each warm checker's status file as written (its JSON, its path), live or not."""
    out = []
    for path in sorted((workspace.state_dir / STATUS_DIR).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "pid" in data:
            out.append((data, path))
    return out


def live(workspace: Workspace) -> list[dict[str, Any]]:
    """Every live warm checker of the workspace: tool, pid, owner pid."""
    out = []
    for data, _ in statuses(workspace):
        record = ProcessRecord(int(data["pid"]), float(data["create_time"]))
        if is_alive(record):
            out.append(
                {
                    "tool": data.get("tool"),
                    "kind": data.get("kind", "language server"),
                    "pid": record.pid,
                    "owner": data.get("owner"),
                    "starting": bool(data.get("starting")),
                }
            )
    return out


def describe(workspace: Workspace) -> str:
    """One line per live warm checker of the workspace, with its owner (`habitat status`)."""
    return "".join(
        f"warm: {c['tool']} {c['kind']} pid {c['pid']}{' starting' if c['starting'] else ''} "
        f"(owned by pid {c['owner']}, "
        "stops when that process ends)\n"
        for c in live(workspace)
    )
