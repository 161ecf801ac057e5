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


def test_deferred_writes_are_done_in_order_before_the_next_read(tmp_path: Path) -> None:
    db = Database(tmp_path / "state.db")
    db.conn.execute("CREATE TABLE t (x INTEGER)")

    def insert(x: int) -> None:
        with db.transaction() as conn:
            conn.execute("INSERT INTO t VALUES (?)", (x,))

    db.defer(lambda: insert(1))
    db.defer(lambda: insert(2))
    assert _other_reader(db.path) == []  # deferred: not written yet
    assert [row[0] for row in db.query("SELECT x FROM t ORDER BY rowid")] == [1, 2]
    db.defer(lambda: insert(3))
    insert(4)  # a transaction, too, writes what was deferred first
    assert [row[0] for row in db.query("SELECT x FROM t ORDER BY rowid")] == [1, 2, 3, 4]
    db.close()


def test_a_failed_deferred_write_keeps_the_ones_after_it(tmp_path: Path) -> None:
    db = Database(tmp_path / "state.db")
    db.conn.execute("CREATE TABLE t (x INTEGER)")

    def fail() -> None:
        raise RuntimeError("disk")

    db.defer(fail)
    db.defer(lambda: db.conn.execute("INSERT INTO t VALUES (7)"))
    with pytest.raises(RuntimeError, match="disk"):
        db.settle()
    db.settle()
    assert _other_reader(db.path) == [7]
    db.close()


def test_another_thread_reads_without_doing_the_deferred_writes(tmp_path: Path) -> None:
    import threading

    db = Database(tmp_path / "state.db")
    db.conn.execute("CREATE TABLE t (x INTEGER)")
    db.defer(lambda: db.conn.execute("INSERT INTO t VALUES (1)"))
    seen: list[int] = []
    reader = threading.Thread(target=lambda: seen.extend(r[0] for r in db.query("SELECT x FROM t")))
    reader.start()
    reader.join(10)
    assert seen == []  # as another process would read it
    db.close()  # closing does them
    assert _other_reader(db.path) == [1]
