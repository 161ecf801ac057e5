"""Tabs and runs as rows of `state.db` — all the SQL of the shell habitat.

Every state change of a run is a conditional update, so when several habitat processes
watch the same run, exactly one records its end.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ..clock import SYSTEM_CLOCK, Clock
from ..errors import BusyTabError, HabitatError, TabLimitError
from ..proc import ProcessRecord
from ..secrets import remember_typed, shown_command
from ..store import Database
from .environment import EnvDelta, apply_delta, base_env, env_delta
from .wrapper import RunFiles

if TYPE_CHECKING:
    from .models import HistoryRow, RunState

__all__ = ["NewRun", "OpenedRun", "RunRow", "RunStore", "TabRow", "busy_error", "start_error"]


@dataclass(frozen=True)
class TabRow:
    name: str
    shell: str
    cwd: str
    env_json: str | None
    created_at: float

    @functools.cached_property
    def env(self) -> dict[str, str] | None:
        """The tab's environment (built from the stored delta when first asked: the scene
        and most verbs never need it)."""
        return _env(self.env_json)


@dataclass(frozen=True)
class RunRow:
    id: int
    tab: str
    idx: int
    command: str
    cwd: str
    shell: str
    state: RunState
    pid: int | None
    create_time: float | None
    marker: str
    exit_code: int | None
    signal: int | None
    timed_out: bool
    background: bool
    interactive: bool
    started_at: float
    ended_at: float | None
    run_dir: Path
    output_bytes: int

    @functools.cached_property
    def files(self) -> RunFiles:
        """Its folder's paths, made once (a run's path asks for them a dozen times)."""
        return RunFiles(self.run_dir)

    @property
    def record(self) -> ProcessRecord | None:
        if self.pid is None:
            return None
        return ProcessRecord(self.pid, self.create_time or 0.0, self.marker)

    def duration_s(self, now: float) -> float:
        """Seconds it ran (so far, at `now`, while it runs)."""
        end = self.ended_at if self.ended_at is not None else now
        return round(max(0.0, end - self.started_at), 3)

    def history_row(self, now: float) -> HistoryRow:
        from .models import HistoryRow  # the verbs' model: the SQL needs no pydantic

        return HistoryRow(
            index=self.idx,
            command=self.command,
            cwd=self.cwd,
            state=self.state,
            exit_code=self.exit_code,
            started_at=self.started_at,
            duration_s=self.duration_s(now),
            output_bytes=self.output_bytes,
            background=self.background,
        )


def _tab(row: sqlite3.Row) -> TabRow:
    return TabRow(row["name"], row["shell"], row["cwd"], row["env_json"], row["created_at"])


def _env(stored: str | None) -> dict[str, str] | None:
    """The tab's environment: its stored delta over this process's base environment (a row of
    an older habitat holds the whole environment instead: taken as it is)."""
    if not stored:
        return None
    data = json.loads(stored)
    if isinstance(data, dict) and set(data) == {"set", "unset"}:
        delta: EnvDelta = {"set": data["set"], "unset": data["unset"]}
        return apply_delta(delta, base_env())
    return dict(data)


def _run(row: sqlite3.Row) -> RunRow:
    # A secret typed in an earlier host's run stays a secret in this one's answers.
    remember_typed(row["command"])
    return RunRow(
        id=row["id"],
        tab=row["tab"],
        idx=row["idx"],
        command=row["command"],
        cwd=row["cwd"],
        shell=row["shell"],
        state=row["state"],
        pid=row["pid"],
        create_time=row["create_time"],
        marker=row["marker"] or f"run-{row['id']}-{row['started_at']:.6f}",
        exit_code=row["exit_code"],
        signal=row["signal"],
        timed_out=bool(row["timed_out"]),
        background=bool(row["background"]),
        interactive=bool(row["interactive"]),
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        run_dir=Path(row["run_dir"]),
        output_bytes=row["output_bytes"],
    )


@dataclass(frozen=True)
class NewRun:
    """A run about to start: what `RunStore.open_run` records."""

    tab: str
    command: str
    cwd: str
    shell: str
    background: bool
    interactive: bool
    marker: str | None = None
    """Its marker when its process was started ahead of it (a prestarted wrapper); None:
    made from its id and start time."""
    process: ProcessRecord | None = None
    """Its process when started ahead of it; None: recorded by `set_process` once started."""


@dataclass(frozen=True)
class OpenedRun:
    run: RunRow
    opened_tab: bool
    """True when this run created its tab."""
    stale: list[Path]
    """Folders of runs trimmed from the history, to delete."""


def busy_error(tab: str, idx: int, command: str) -> BusyTabError:
    return BusyTabError(
        f"tab {tab!r} is busy running #{idx} `{shown_command(command)}`; wait for it, kill it, "
        "or use another tab"
    )


def start_error(exc: OSError, run: RunRow, what: str) -> HabitatError:
    """What a run that could not start tells its caller: a full disk says where to free space."""
    if exc.errno == errno.ENOSPC:
        return HabitatError(
            f"could not start the run: no space left on the disk holding its spool "
            f"({run.run_dir.parent}); free space there and run it again"
        )
    return HabitatError(f"could not start {what}: {exc}")


class RunStore:
    """Queries and updates of the `tabs` and `runs` tables."""

    def __init__(self, db: Database, clock: Clock = SYSTEM_CLOCK) -> None:
        self.db = db
        self.clock = clock

    # tabs
    def tab(self, name: str) -> TabRow | None:
        rows = self.db.query("SELECT * FROM tabs WHERE name = ?", (name,))
        return _tab(rows[0]) if rows else None

    def tabs(self) -> list[TabRow]:
        return [_tab(r) for r in self.db.query("SELECT * FROM tabs ORDER BY created_at, name")]

    def _create_tab(self, conn: sqlite3.Connection, name: str, shell: str, cwd: str) -> None:
        conn.execute(
            "INSERT INTO tabs (name, shell, cwd, env_json, created_at) VALUES (?, ?, ?, NULL, ?)",
            (name, shell, cwd, self.clock.time()),
        )

    def retarget_tabs(self, old_cwd: str, new_cwd: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE tabs SET cwd = ? WHERE cwd = ?", (new_cwd, old_cwd))

    def delete_tab(self, name: str) -> list[Path]:
        """Remove a tab and its history; returns the run folders to delete."""
        with self.db.transaction() as conn:
            dirs = [
                Path(r[0]) for r in conn.execute("SELECT run_dir FROM runs WHERE tab = ?", (name,))
            ]
            conn.execute("DELETE FROM runs WHERE tab = ?", (name,))
            conn.execute("DELETE FROM tabs WHERE name = ?", (name,))
        return dirs

    # runs
    def open_run(self, new: NewRun, *, spool_dir: Path, max_tabs: int, keep: int) -> OpenedRun:
        """Open the tab if needed (within `max_tabs`), record the run and trim the tab's
        history to `keep` rows, committed before the caller spawns anything: a habitat that
        dies right after the spawn leaves a row others see, and the id (an AUTOINCREMENT,
        so never handed out twice) stays taken.

        Raises TabLimitError at the tab limit, BusyTabError when the tab runs something, and
        HabitatError when the disk holding `state.db` is full.
        """
        try:
            return self._open_run(new, spool_dir=spool_dir, max_tabs=max_tabs, keep=keep)
        except sqlite3.OperationalError as exc:
            self.full_disk(exc, "the run")

    def full_disk(self, exc: sqlite3.OperationalError, what: str) -> NoReturn:
        """`exc` again, or what a full disk under `state.db` means to the caller."""
        if "full" not in str(exc):
            raise exc
        raise HabitatError(
            f"cannot record {what}: the disk holding {self.db.path} is full ({exc}); "
            "free space there (old spools are under its spool/ folder) and run it again"
        ) from exc

    def _open_run(self, new: NewRun, *, spool_dir: Path, max_tabs: int, keep: int) -> OpenedRun:
        with self.db.transaction() as conn:
            # Another habitat process may have opened the tab since the caller looked.
            exists = conn.execute("SELECT 1 FROM tabs WHERE name = ?", (new.tab,)).fetchone()
            if exists is None:
                count = conn.execute("SELECT COUNT(*) FROM tabs").fetchone()[0]
                if count >= max_tabs:
                    raise TabLimitError(max_tabs, [t.name for t in self.tabs()])
                self._create_tab(conn, new.tab, new.shell, new.cwd)
            busy = conn.execute(
                "SELECT idx, command FROM runs WHERE tab = ? AND state = 'running'", (new.tab,)
            ).fetchone()
            if busy is not None:  # another habitat process started one a moment ago
                raise busy_error(new.tab, busy["idx"], busy["command"])
            run = self._insert_run(conn, new, spool_dir)
            stale = self._trim(conn, new.tab, run.idx, keep)
        return OpenedRun(run, opened_tab=exists is None, stale=stale)

    def set_process(self, run_id: int, record: ProcessRecord) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE runs SET pid = ?, create_time = ? WHERE id = ?",
                (record.pid, record.create_time or None, run_id),
            )

    def abandon_run(self, opened: OpenedRun) -> None:
        """Undo `open_run` for a run whose process could not start: the row goes, the tab
        too when the run opened it, else the tab's next index is given back."""
        run = opened.run
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM runs WHERE id = ?", (run.id,))
            if opened.opened_tab:
                conn.execute("DELETE FROM tabs WHERE name = ?", (run.tab,))
            else:
                conn.execute(
                    "UPDATE tabs SET next_index = ? WHERE name = ? AND next_index = ?",
                    (run.idx, run.tab, run.idx + 1),
                )

    def _insert_run(self, conn: sqlite3.Connection, new: NewRun, spool_dir: Path) -> RunRow:
        tab = new.tab
        idx = conn.execute("SELECT next_index FROM tabs WHERE name = ?", (tab,)).fetchone()[0]
        conn.execute("UPDATE tabs SET next_index = next_index + 1 WHERE name = ?", (tab,))
        process = new.process
        cur = conn.execute(
            "INSERT INTO runs (tab, idx, command, cwd, shell, state, background, interactive,"
            " started_at, run_dir, marker, pid, create_time)"
            " VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, '', ?, ?, ?) RETURNING *",
            (
                tab,
                idx,
                new.command,
                new.cwd,
                new.shell,
                int(new.background),
                int(new.interactive),
                self.clock.time(),
                new.marker,
                process.pid if process else None,
                (process.create_time or None) if process else None,
            ),
        )
        row = cur.fetchone()
        run_dir = spool_dir / f"run-{row['id']}"
        conn.execute("UPDATE runs SET run_dir = ? WHERE id = ?", (str(run_dir), row["id"]))
        return dataclasses.replace(_run(row), run_dir=run_dir)

    def set_create_time(self, run_id: int, create_time: float) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE runs SET create_time = ? WHERE id = ?", (create_time, run_id))

    def get(self, run_id: int) -> RunRow | None:
        rows = self.db.query("SELECT * FROM runs WHERE id = ?", (run_id,))
        return _run(rows[0]) if rows else None

    def by_index(self, tab: str, idx: int | None) -> RunRow | None:
        if idx is None:
            rows = self.db.query(
                "SELECT * FROM runs WHERE tab = ? ORDER BY idx DESC LIMIT 1", (tab,)
            )
        else:
            rows = self.db.query("SELECT * FROM runs WHERE tab = ? AND idx = ?", (tab, idx))
        return _run(rows[0]) if rows else None

    def latest(self) -> dict[str, RunRow]:
        """Each tab's newest run, in one query."""
        rows = self.db.query(
            "SELECT r.* FROM runs r JOIN (SELECT tab, MAX(idx) AS idx FROM runs GROUP BY tab)"
            " newest ON r.tab = newest.tab AND r.idx = newest.idx"
        )
        return {row["tab"]: _run(row) for row in rows}

    def running(self, tab: str | None = None) -> list[RunRow]:
        if tab is None:
            rows = self.db.query("SELECT * FROM runs WHERE state = 'running' ORDER BY id")
        else:
            rows = self.db.query(
                "SELECT * FROM runs WHERE state = 'running' AND tab = ? ORDER BY id", (tab,)
            )
        return [_run(r) for r in rows]

    def history(self, tab: str, limit: int) -> list[RunRow]:
        rows = self.db.query(
            "SELECT * FROM runs WHERE tab = ? ORDER BY idx DESC LIMIT ?", (tab, limit)
        )
        return [_run(r) for r in reversed(rows)]

    def finish(
        self,
        run_id: int,
        state: RunState,
        *,
        exit_code: int | None,
        signal: int | None,
        timed_out: bool = False,
        output_bytes: int,
        tab_cwd: str | None = None,
        tab_env: dict[str, str] | None = None,
        ended_at: float | None = None,
    ) -> RunRow | None:
        """Record the end of a running run (and what its tab carries on), at `ended_at`
        (default now): its row as ended. None when someone else already did.

        Raises sqlite3.OperationalError (`full_disk` says what a full disk means)."""
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE runs SET state = ?, exit_code = ?, signal = ?, timed_out = ?,"
                " cancelled = ?, ended_at = ?, output_bytes = ? WHERE id = ? AND state = 'running'"
                " RETURNING *",
                (
                    state,
                    exit_code,
                    signal,
                    int(timed_out),
                    int(state == "cancelled"),
                    self.clock.time() if ended_at is None else ended_at,
                    output_bytes,
                    run_id,
                ),
            )
            ended = cur.fetchone()
            if ended is None:
                return None
            if tab_cwd is not None or tab_env is not None:
                delta = None if tab_env is None else json.dumps(env_delta(tab_env, base_env()))
                conn.execute(
                    "UPDATE tabs SET cwd = coalesce(?, cwd), env_json = coalesce(?, env_json)"
                    " WHERE name = (SELECT tab FROM runs WHERE id = ?)",
                    (tab_cwd, delta, run_id),
                )
        return _run(ended)

    def _trim(self, conn: sqlite3.Connection, tab: str, newest: int, keep: int) -> list[Path]:
        """Drop finished runs older than the newest `keep`; returns their folders."""
        if newest <= keep:
            return []
        rows = conn.execute(
            "DELETE FROM runs WHERE tab = ? AND state != 'running' AND idx <= ? RETURNING run_dir",
            (tab, newest - keep),
        ).fetchall()
        return [Path(r["run_dir"]) for r in rows]
