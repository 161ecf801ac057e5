"""An event written to the journal the way the bus writes it, standard library only: the
quick paths with no host (`shell.quiet_run`, `shell.quiet_close`, `cli.project_quiet`'s
`habitat trust`) record their events with it, without the `Event` model."""

from __future__ import annotations

import json
import time

from ..secrets import redact_data

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

__all__ = ["publish"]


def publish(conn: Any, label: str, kind: str, tab: str | None, data: dict[str, Any]) -> None:
    """`InMemoryEventBus.publish` into `SqliteJournal.append`: the event, redacted, in the
    journal (the same row; nothing subscribes in this process)."""
    conn.execute(
        "INSERT INTO events (ts, kind, workspace, task, tab, data_json) VALUES (?, ?, ?, ?, ?, ?)",
        (time.time(), kind, label, None, tab, json.dumps(redact_data(data), default=str)),
    )
