"""The bounded event journal in `state.db`."""

from __future__ import annotations

import json

from ..events.models import Event
from .db import Database

__all__ = ["SqliteJournal"]


class SqliteJournal:
    """Appends events with monotonic ids and keeps the newest `limit` of them."""

    def __init__(self, db: Database, limit: int = 10_000) -> None:
        self.db = db
        self.limit = limit
        self._appended = 0

    def append(self, event: Event) -> Event:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO events (ts, kind, workspace, task, tab, data_json)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    event.ts,
                    event.kind,
                    event.workspace,
                    event.task,
                    event.tab,
                    json.dumps(event.data, default=str),
                ),
            )
            self._appended += 1
            # Trimming on every append would cost a scan; every 100th keeps it bounded.
            if self._appended % 100 == 0:
                conn.execute(
                    "DELETE FROM events WHERE id <= (SELECT MAX(id) FROM events) - ?",
                    (self.limit,),
                )
        assert cur.lastrowid is not None
        return event.model_copy(update={"id": cur.lastrowid})

    def since(self, event_id: int = 0, limit: int = 1000) -> list[Event]:
        """Events with id greater than `event_id`, oldest first."""
        rows = self.db.query(
            "SELECT * FROM events WHERE id > ? ORDER BY id LIMIT ?", (event_id, limit)
        )
        return [
            Event(
                id=r["id"],
                ts=r["ts"],
                kind=r["kind"],
                workspace=r["workspace"],
                task=r["task"],
                tab=r["tab"],
                data=json.loads(r["data_json"]),
            )
            for r in rows
        ]
