"""The workspace's record of verify: who serves it, and each epoch as it last stood.

The runner keeps epochs in memory, in the process that serves the workspace (the embedded
MCP server today, the host later). A CLI process has no runner; to answer `habitat status`
honestly it reads this record from `state.db`: the latest epoch's lean report with the
snapshot it verified (content hashes included, so staleness is computed against the tree
as it is now), and whether the process that recorded it is still alive.
"""

from __future__ import annotations

import functools
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from ...store import Database
from .. import Snapshot
from .accounting import TimeReport
from .epochs import VerifyEpoch
from .report import EpochReport, epoch_report

__all__ = ["EpochRecords", "RecordedEpoch", "Server", "red_gone"]

_KEPT = 20
"""Epochs kept per project root."""


@dataclass(frozen=True)
class Server:
    """A process that serves the workspace's verify runner."""

    pid: int
    create_time: float
    root: str | None
    started_at: float
    time: TimeReport | None

    def describe(self) -> str:
        me = " (this process)" if self.pid == os.getpid() else ""
        return (
            f"pid {self.pid}{me}, serving {self.root or 'no project'} since {_ts(self.started_at)}"
        )


@dataclass(frozen=True)
class RecordedEpoch:
    report: EpochReport
    snapshot: Snapshot | None
    updated_at: float


def _ts(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def _alive(pid: int, create_time: float) -> bool:
    import psutil  # here: `habitat status` with nothing serving verify never asks

    try:
        return bool(abs(psutil.Process(pid).create_time() - create_time) < 0.01)
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False


def _me() -> tuple[int, float]:
    """This process's pid and create time (read once per pid: a call's accounting notes
    it after every call, and psutil reads /proc for it each time)."""
    pid = os.getpid()
    return pid, _create_time(pid)


@functools.lru_cache(maxsize=4)
def _create_time(pid: int) -> float:
    import psutil

    return float(psutil.Process(pid).create_time())


class EpochRecords:
    """Reads and writes the record on the workspace's database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def serve(self, root: Path) -> None:
        """This process serves a runner on `root` now."""
        pid, created = _me()
        now = time.time()
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO servers (pid, create_time, root, started_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (pid, created, str(root), now, now),
            )

    def unserve(self) -> None:
        pid, created = _me()
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM servers WHERE pid = ? AND create_time = ?", (pid, created))

    def note_time(self, report: TimeReport) -> None:
        """Record this process's time accounting (only while it serves)."""
        pid, created = _me()
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE servers SET time_json = ?, updated_at = ? "
                "WHERE pid = ? AND create_time = ?",
                (report.model_dump_json(), time.time(), pid, created),
            )

    def servers(self) -> list[Server]:
        """The live processes serving the workspace; rows of dead ones are dropped."""
        alive: list[Server] = []
        dead: list[tuple[int, float]] = []
        for row in self.db.query("SELECT * FROM servers ORDER BY started_at"):
            if not _alive(row["pid"], row["create_time"]):
                dead.append((row["pid"], row["create_time"]))
                continue
            raw = row["time_json"]
            alive.append(
                Server(
                    pid=row["pid"],
                    create_time=row["create_time"],
                    root=row["root"],
                    started_at=row["started_at"],
                    time=TimeReport.model_validate_json(raw) if raw else None,
                )
            )
        if dead:
            with self.db.transaction() as conn:
                conn.executemany("DELETE FROM servers WHERE pid = ? AND create_time = ?", dead)
        return alive

    def save(self, root: Path, report: EpochReport, snapshot: Snapshot | None) -> None:
        snap = None
        if snapshot is not None:
            snap = json.dumps(
                {
                    "id": snapshot.id,
                    "head": snapshot.head,
                    "hashes": snapshot.hashes,
                    "in_git": snapshot.in_git,
                }
            )
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO verify_epochs "
                "(task, root, epoch, state, updated_at, report_json, snapshot_json) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    report.task,
                    str(root),
                    report.epoch,
                    report.state,
                    time.time(),
                    report.model_dump_json(),
                    snap,
                ),
            )
            conn.execute(
                "DELETE FROM verify_epochs WHERE root = ? AND task NOT IN (SELECT task FROM "
                "verify_epochs WHERE root = ? ORDER BY updated_at DESC LIMIT ?)",
                (str(root), str(root), _KEPT),
            )

    def latest(
        self, root: Path, task: str | None = None, *, before: int | None = None
    ) -> RecordedEpoch | None:
        """The newest recorded epoch of `root` (or `task`'s, or the last numbered `before`)."""
        if before is not None:
            rows = self.db.query(
                "SELECT * FROM verify_epochs WHERE root = ? AND epoch < ? "
                "ORDER BY epoch DESC LIMIT 1",
                (str(root), before),
            )
        elif task is not None:
            rows = self.db.query(
                "SELECT * FROM verify_epochs WHERE root = ? AND task = ?",
                (str(root), task.split(".", 1)[0]),
            )
        else:
            rows = self.db.query(
                "SELECT * FROM verify_epochs WHERE root = ? ORDER BY updated_at DESC LIMIT 1",
                (str(root),),
            )
        if not rows:
            return None
        row = rows[0]
        snapshot = None
        if row["snapshot_json"]:
            raw = json.loads(row["snapshot_json"])
            snapshot = Snapshot(
                id=raw["id"], head=raw["head"], hashes=raw["hashes"], in_git=raw["in_git"]
            )
        report = EpochReport.model_validate_json(row["report_json"])
        return RecordedEpoch(report=report, snapshot=snapshot, updated_at=row["updated_at"])

    def told(self, view: VerifyEpoch, root: Path) -> VerifyEpoch:
        """`view`, its climb's reason saying so when a clean tree undid the red change of
        the epoch before (`red_gone`): each way out (verify_run, verify_status, the CLI)."""
        result = view.result
        if result is None or result.state != "nothing_to_verify" or result.touched:
            return view  # only then is the record read
        line = red_gone(self.latest(root, before=view.epoch), view.head)
        if line is None:
            return view
        return view.model_copy(update={"result": result.model_copy(update={"reason": line})})

    def report(self, view: VerifyEpoch, root: Path) -> EpochReport:
        """The lean report of `view` (`epoch_report`), as `told` words it."""
        return epoch_report(self.told(view, root), root)

    def last_number(self, root: Path) -> int:
        """The highest epoch number recorded for `root` (0 before any)."""
        rows = self.db.query(
            "SELECT MAX(epoch) AS n FROM verify_epochs WHERE root = ?", (str(root),)
        )
        return int(rows[0]["n"] or 0)


def red_gone(before: RecordedEpoch | None, head: str | None) -> str | None:
    """One line for a climb on HEAD's very content right after a red one on a change to the
    same HEAD: that change is gone (undone, not committed), which is all a clean tree says.
    Not green: nothing was checked. None in any other case (today's hint stands)."""
    if before is None or before.snapshot is None or not before.snapshot.hashes:
        return None
    report = before.report
    red = report.state == "red" or (report.state == "stale" and report.verified_state == "red")
    if not red or head is None or before.snapshot.head != head:
        return None
    paths = sorted(before.snapshot.hashes)
    what = ", ".join(paths[:3]) + (f" (+{len(paths) - 3} more)" if len(paths) > 3 else "")
    return (
        f"the tree is HEAD {head[:12]}'s content again: epoch {report.epoch}'s red change "
        f"({what}) is gone; nothing else to verify"
    )
