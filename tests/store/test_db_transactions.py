"""`Database.transaction`: a transaction inside another is part of it (one commit)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_habitat.store import Database


def _other_reader(path: Path) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("SELECT x FROM t ORDER BY x")]
    finally:
        conn.close()


def test_a_transaction_inside_another_commits_with_the_outer_one(tmp_path: Path) -> None:
    db = Database(tmp_path / "state.db")
    db.conn.execute("CREATE TABLE t (x INTEGER)")
    with db.transaction() as outer:
        outer.execute("INSERT INTO t VALUES (1)")
        with db.transaction() as inner:
            inner.execute("INSERT INTO t VALUES (2)")
        assert _other_reader(db.path) == []  # nothing committed yet
    assert _other_reader(db.path) == [1, 2]
    with db.transaction() as conn:  # the connection serves the next one as before
        conn.execute("INSERT INTO t VALUES (3)")
    assert _other_reader(db.path) == [1, 2, 3]
    db.close()


def test_a_failure_inside_a_nested_transaction_rolls_back_the_whole(tmp_path: Path) -> None:
    db = Database(tmp_path / "state.db")
    db.conn.execute("CREATE TABLE t (x INTEGER)")

    def fail_inside() -> None:
        with db.transaction() as outer:
            outer.execute("INSERT INTO t VALUES (1)")
            with db.transaction() as inner:
                inner.execute("INSERT INTO t VALUES (2)")
                raise RuntimeError("inner")

    with pytest.raises(RuntimeError, match="inner"):
        fail_inside()
    assert _other_reader(db.path) == []
    with db.transaction() as conn:
        conn.execute("INSERT INTO t VALUES (4)")
    assert _other_reader(db.path) == [4]
    db.close()
