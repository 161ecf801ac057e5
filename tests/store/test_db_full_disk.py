"""The state database on a disk that fills: a COMMIT without room fails and is rolled back,
and the connection serves the next transaction (before, it stayed inside the failed one:
every later BEGIN failed, and the server with it)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_habitat.store import Database
from small_disks import fill, tmpfs


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "small", "4m") as disk:
        yield disk


def add_tab(db: Database, name: str) -> None:
    with db.transaction() as conn:
        # A row wide enough that its pages cannot fit in what the filler left over.
        conn.execute(
            "INSERT INTO tabs (name, shell, cwd, env_json, created_at) VALUES (?, ?, ?, ?, 0)",
            (name, "bash", "/", "x" * 200_000),
        )


def tabs(db: Database) -> list[str]:
    return [row["name"] for row in db.query("SELECT name FROM tabs ORDER BY name")]


def test_a_commit_without_room_fails_rolls_back_and_the_next_one_works(small_disk: Path) -> None:
    db = Database(small_disk / "state.db")
    add_tab(db, "before")
    filler = fill(small_disk)
    with pytest.raises(sqlite3.OperationalError, match="full"):
        add_tab(db, "lost")
    assert not db.conn.in_transaction
    filler.unlink()
    add_tab(db, "after")
    assert tabs(db) == ["after", "before"]
    db.close()
