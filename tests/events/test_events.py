from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agent_habitat.events import Event, InMemoryEventBus
from agent_habitat.store import Database, SqliteJournal


def test_subscriber_receives_published_events_until_it_unsubscribes() -> None:
    bus = InMemoryEventBus("ws")
    seen: list[Event] = []
    unsubscribe = bus.subscribe(seen.append)
    bus.publish("shell.tab.opened", tab="main")
    unsubscribe()
    bus.publish("shell.tab.closed", tab="main")
    assert [e.kind for e in seen] == ["shell.tab.opened"]
    assert seen[0].workspace == "ws"


def test_a_failing_subscriber_is_isolated_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    bus = InMemoryEventBus("ws")
    seen: list[str] = []

    def broken(event: Event) -> None:
        raise RuntimeError("subscriber bug")

    bus.subscribe(broken)
    bus.subscribe(lambda e: seen.append(e.kind))
    with caplog.at_level(logging.ERROR):
        event = bus.publish("shell.run.started", data={"index": 1})
    assert seen == ["shell.run.started"]
    assert event.id == 1
    assert "subscriber bug" in caplog.text


def test_journal_assigns_monotonic_ids_and_replays_since(tmp_path: Path) -> None:
    db = Database(tmp_path / "state.db")
    journal = SqliteJournal(db)
    bus = InMemoryEventBus("ws", journal)
    ids = [bus.publish("file.written", data={"n": n}).id for n in range(5)]
    assert ids == sorted(ids)
    assert len(set(ids)) == 5
    replay = journal.since(ids[1])
    assert [e.data["n"] for e in replay] == [2, 3, 4]
    db.close()


def test_journal_stays_bounded(tmp_path: Path) -> None:
    db = Database(tmp_path / "state.db")
    journal = SqliteJournal(db, limit=100)
    bus = InMemoryEventBus("ws", journal)
    for n in range(400):
        bus.publish("file.written", data={"n": n})
    kept = journal.since(0, limit=10_000)
    assert len(kept) <= 200
    assert kept[-1].data["n"] == 399
    db.close()


def test_database_from_a_newer_habitat_is_refused(tmp_path: Path) -> None:
    db = Database(tmp_path / "state.db")
    db.conn.execute("PRAGMA user_version=999")
    db.close()
    with pytest.raises(RuntimeError, match="newer than this habitat"):
        Database(tmp_path / "state.db")
