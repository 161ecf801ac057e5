"""`Database.checkpoint_apart`: the connection's WAL is copied and started over by
`checkpoint` (a worker thread's job), never inside one of its own commits."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agent_habitat.store import Database
from agent_habitat.store.db import _CHECKPOINT_COMMITS


def _wal_frames(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert busy == 0
        assert frames == copied  # nobody else reads: all of it is in the database now
        return int(frames)
    finally:
        conn.close()


def _commit(db: Database, rows: int) -> None:
    for i in range(rows):
        with db.transaction() as conn:
            conn.execute("INSERT INTO t VALUES (?)", ("x" * 3000 + str(i),))


def test_commits_ask_for_a_checkpoint_apart_and_it_starts_the_wal_over(tmp_path: Path) -> None:
    db = Database(tmp_path / "state.db")
    db.conn.execute("CREATE TABLE t (x TEXT)")
    asked: list[int] = []
    db.checkpoint_apart(lambda: asked.append(1))
    assert db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    _commit(db, _CHECKPOINT_COMMITS - 1)
    assert asked == []
    _commit(db, 1)
    assert asked == [1]  # once per _CHECKPOINT_COMMITS commits, none inside a commit
    db.checkpoint()
    # The WAL started over in the checkpoint's own write (one frame), not in the next commit.
    assert _wal_frames(db.path) == 1
    _commit(db, 3)
    assert 1 + 3 <= _wal_frames(db.path) < _CHECKPOINT_COMMITS  # on top of it, not over
    rows = sqlite3.connect(db.path).execute("SELECT COUNT(*) FROM t").fetchone()[0]
    assert rows == _CHECKPOINT_COMMITS + 3
    db.close()


def test_a_checkpoint_with_nothing_to_copy_writes_nothing(tmp_path: Path) -> None:
    db = Database(tmp_path / "state.db")
    db.checkpoint_apart(lambda: None)
    db.checkpoint()
    db.checkpoint()
    assert db.conn.execute("PRAGMA user_version").fetchone()[0] >= 1  # schema as migrated
    db.close()
