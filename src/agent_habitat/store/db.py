"""SQLite (WAL) state of one workspace: schema, migrations and the connection.

One file per workspace. Several habitat processes (CLI, MCP server, host) share it;
WAL lets readers run beside one writer, and `busy_timeout` queues writers.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from pathlib import Path  # annotations alone: a reader of the schema number skips pathlib

__all__ = ["SCHEMA_VERSION", "Database"]

# Each entry migrates from version i to i+1. Append; never edit a shipped step.
_MIGRATIONS: list[str] = [
    """
    CREATE TABLE tabs (
        name TEXT PRIMARY KEY,
        shell TEXT NOT NULL,
        cwd TEXT NOT NULL,
        env_json TEXT,
        created_at REAL NOT NULL,
        next_index INTEGER NOT NULL DEFAULT 1
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        tab TEXT NOT NULL,
        idx INTEGER NOT NULL,
        command TEXT NOT NULL,
        cwd TEXT NOT NULL,
        shell TEXT NOT NULL,
        state TEXT NOT NULL,
        pid INTEGER,
        create_time REAL,
        exit_code INTEGER,
        signal INTEGER,
        timed_out INTEGER NOT NULL DEFAULT 0,
        cancelled INTEGER NOT NULL DEFAULT 0,
        background INTEGER NOT NULL DEFAULT 0,
        interactive INTEGER NOT NULL DEFAULT 0,
        started_at REAL NOT NULL,
        ended_at REAL,
        run_dir TEXT NOT NULL,
        output_bytes INTEGER NOT NULL DEFAULT 0,
        UNIQUE (tab, idx)
    );
    CREATE INDEX runs_state ON runs (state);
    CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts REAL NOT NULL,
        kind TEXT NOT NULL,
        workspace TEXT NOT NULL,
        task TEXT,
        tab TEXT,
        data_json TEXT NOT NULL
    );
    """,
    # What a process that serves no verify runner (the CLI) needs to answer `habitat status`:
    # the processes serving the workspace, and each epoch's lean report as it last stood.
    """
    CREATE TABLE servers (
        pid INTEGER NOT NULL,
        create_time REAL NOT NULL,
        root TEXT,
        started_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        time_json TEXT,
        PRIMARY KEY (pid, create_time)
    );
    CREATE TABLE verify_epochs (
        task TEXT PRIMARY KEY,
        root TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        state TEXT NOT NULL,
        updated_at REAL NOT NULL,
        report_json TEXT NOT NULL,
        snapshot_json TEXT
    );
    CREATE INDEX verify_epochs_root ON verify_epochs (root, updated_at);
    """,
    # A run whose process started ahead of it (a prestarted wrapper) keeps the marker that
    # process was given; NULL: made from the run's id and start time, as before.
    """
    ALTER TABLE runs ADD COLUMN marker TEXT;
    """,
]

SCHEMA_VERSION = len(_MIGRATIONS)

_CHECKPOINT_COMMITS = 100
"""Commits between two checkpoints done apart (`checkpoint_apart`): about SQLite's own 1,000
pages of WAL at the five to ten pages a run's start or end writes."""


class Database:
    """A connection to a workspace's `state.db`, migrated on open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we open transactions ourselves, so reads never hold locks.
        self.conn = sqlite3.connect(
            path, timeout=10.0, isolation_level=None, check_same_thread=False
        )
        self.conn.row_factory = sqlite3.Row
        self._depth = 0
        """How many `transaction` blocks are open (the outermost commits)."""
        self._deferred: list[Callable[[], object]] = []
        """Writes left for later (`defer`), done before anything reads or writes here."""
        self._deferred_in = 0
        """The thread that deferred them (the event loop's), the only one that does them."""
        self._commits = 0
        self._schedule: Callable[[], None] | None = None
        """Asked to have `checkpoint` run apart (`checkpoint_apart`); None: SQLite's own."""
        self._checkpointer: sqlite3.Connection | None = None
        self.conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL is durable against process crashes in WAL mode; only power loss can drop the tail.
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA busy_timeout=10000")
        self._migrate()

    def _version(self) -> int:
        version: int = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise RuntimeError(
                f"{self.path} has schema version {version}, newer than this habitat "
                f"({SCHEMA_VERSION}); upgrade agent-habitat"
            )
        return version

    def _migrate(self) -> None:
        # A database already at this version (every open but a workspace's first) is read,
        # not written: no write lock taken behind another process's writes, nothing in the WAL.
        if self._version() == SCHEMA_VERSION:
            return
        with self.transaction():
            version = self._version()  # again under the lock: another process may have migrated
            for step in _MIGRATIONS[version:]:
                for statement in step.split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
            self.conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """An immediate (write-locking) transaction, committed on success. One whose COMMIT
        fails (a full disk: SQLite then rolls it back itself) is rolled back, so the error
        reaches the caller and the connection serves the next transaction.

        Inside another transaction of this connection it is part of that one: what a caller
        writes together (a run's end and its event) is one commit, and fails together."""
        if self._depth:
            self._depth += 1
            try:
                yield self.conn
            finally:
                self._depth -= 1
            return
        if self._deferred:
            self.settle()
        self.conn.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise
        finally:
            self._depth = 0
        self._commits += 1
        if self._schedule is not None and self._commits >= _CHECKPOINT_COMMITS:
            self._commits = 0
            self._schedule()

    def checkpoint_apart(self, schedule: Callable[[], None]) -> None:
        """Leave the checkpoints of this connection's commits to `checkpoint`, which
        `schedule()` is asked to have run in a worker thread every `_CHECKPOINT_COMMITS`
        commits. SQLite's own runs inside the commit that crosses its threshold, and the
        commit after it starts the WAL over: both sync the disk, 7-32 ms each on a busy one
        (by hand at load 17), every ~90 runs, on the event loop."""
        self.conn.execute("PRAGMA wal_autocheckpoint=0")
        self._schedule = schedule
        self._commits = 0

    def checkpoint(self) -> None:
        """Copy the WAL into the database, then start the WAL over, with a connection of
        this thread's own (blocking: a worker thread's job). PASSIVE: it waits for no reader
        and no writer; the WAL starts over only when all of it was copied and nobody reads
        it, and then here (one write of the same `user_version`: the new WAL's first frame
        and the sync of its header), not in the next commit of the event loop."""
        try:
            if self._checkpointer is None:
                self._checkpointer = sqlite3.connect(
                    self.path, timeout=10.0, isolation_level=None, check_same_thread=False
                )
                self._checkpointer.execute("PRAGMA synchronous=NORMAL")
            conn = self._checkpointer
            busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if busy or frames != copied or frames <= 0:
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                conn.execute(f"PRAGMA user_version={version}")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error:
            return  # the next one tries again, as SQLite's own would at its next commit

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        if self._deferred:
            self.settle()
        return self.conn.execute(sql, params).fetchall()

    def defer(self, job: Callable[[], object]) -> None:
        """Do `job` (its writes) before this connection's next query or transaction, or at
        `settle`, whichever comes first: what a caller records after its answer is written
        before anything of this process reads the database, so no reader here sees the
        state from before it."""
        self._deferred_in = threading.get_ident()
        self._deferred.append(job)

    def settle(self) -> None:
        """Do the deferred jobs now, in the order they were deferred (in the thread that
        deferred them: another thread reads the database as another process would)."""
        while self._deferred and threading.get_ident() == self._deferred_in:
            jobs, self._deferred = self._deferred, []
            for i, job in enumerate(jobs):
                try:
                    job()
                except BaseException:
                    self._deferred[:0] = jobs[i + 1 :]
                    raise

    def close(self) -> None:
        self.settle()
        if self._checkpointer is not None:
            self._checkpointer.close()
        self.conn.close()
