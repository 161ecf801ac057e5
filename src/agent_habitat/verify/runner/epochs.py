"""Epochs: each verify run, bound to the snapshot it verifies, and whether the tree has
moved on since (DESIGN §5 "Epochs").

`VerifyEpoch` is the contract (the MCP `verify_status` / `habitat://verify/epoch` output);
`Epoch` is the runner's mutable record behind it. A stale epoch never says `green`: its
`state` is `stale` and `verified_state` keeps what the climb found on its own snapshot.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path
from typing import Literal

import anyio.to_thread
from pydantic import Field

from ...git_env import git_env
from ..field_docs import DocumentedModel
from ..models import (
    POLICIES,
    RUNGS,
    LadderRequest,
    LadderResult,
    LadderState,
    Policy,
    RungName,
    RungResult,
    RungState,
)
from ..snapshot import Snapshot, changed_between, file_hash
from ..toolchains import snapshot_of

__all__ = [
    "Epoch",
    "EpochState",
    "RungStatus",
    "VerifyEpoch",
    "changed_between",
    "contradicting",
    "contradicts",
    "dirty_now",
    "moved_since",
]

EpochState = Literal["queued", "running", "stale"] | LadderState
"""`queued` (gathering requests or waiting for the chain before it), `running`, the
climb's own state once finished, or `stale` once the tree differs from its snapshot."""

# A run that did not finish its climb says so even when the tree moved on meanwhile.
_KEEP_WHEN_STALE = ("cancelled", "error")

RungProgress = Literal["waiting", "running"] | RungState


class RungStatus(DocumentedModel):
    """One rung of an epoch, as far as it got."""

    rung: RungName
    """The rung's name."""
    task: str
    """Task id `<epoch task>.<rung>`, as in the `environment.task.*` events."""
    state: RungProgress
    """`waiting`, `running`, or how it ended (`green`, `red`, `died`, `cancelled`, …)."""
    reason: str | None = None
    """Why it is not green, in one line."""
    tool: str | None = None
    """What ran, e.g. `ruff`, `dmypy`, `pytest`."""
    duration_s: float | None = None
    """Seconds it took, once finished."""
    pid: int | None = None
    """The last process the rung started."""
    notes: list[str] = Field(default_factory=list)
    """E.g. `dmypy daemon (pid 4242) was dead; restarted`, `running tests/x.py::t when it died`."""


class VerifyEpoch(DocumentedModel):
    """One verify run bound to its snapshot."""

    epoch: int
    """The run's number in this workspace (monotonic)."""
    task: str
    """Task id of the chain; its rungs are `<task>.<rung>`."""
    state: EpochState
    """`queued`, `running`, the climb's state once finished, or `stale` (never `green` then)."""
    verified_state: LadderState | None = None
    """What the climb found on its own snapshot; None until it finished."""
    stale: bool = False
    """True when a file of the epoch's set changed after its snapshot was taken."""
    changed: list[str] = Field(default_factory=list)
    """Paths (relative to the project root) that changed since the snapshot."""
    moved_while_running: bool = False
    """True when the tree changed while the climb ran: its rungs may have seen other
    content than the snapshot's, so it stays stale even once the tree is back. A change
    after it finished is undone by putting the files back (an undo, `git checkout`)."""
    snapshot: str | None = None
    """The snapshot id it verifies; None while queued."""
    head: str | None = None
    """The HEAD commit of that snapshot."""
    policy: Policy | None = None
    """The policy it climbs (the highest of the coalesced requests)."""
    request: LadderRequest
    """The request it runs: the merge of every coalesced request."""
    requests: int = 1
    """How many verify requests this run answers (coalesced within the window)."""
    superseded_by: str | None = None
    """The task that cancelled it (implicit cancel of the predecessor)."""
    touched: list[str] = Field(default_factory=list)
    """The change it verifies (dirty set of its snapshot, or the files given)."""
    rungs: list[RungStatus] = Field(default_factory=list)
    """Each planned rung and how far it got."""
    notes: list[str] = Field(default_factory=list)
    """Facts about the run, e.g. what coalescing gave up, or a configuration error."""
    queued_at: float
    """Unix time of its first request."""
    started_at: float | None = None
    """Unix time the climb began (after the coalesce window)."""
    finished_at: float | None = None
    """Unix time it ended."""
    duration_s: float | None = None
    """Seconds the climb took."""
    result: LadderResult | None = None
    """The full result once finished (a cancelled run's holds the rungs that finished)."""

    @property
    def finished(self) -> bool:
        return self.finished_at is not None

    @property
    def covers(self) -> list[RungName]:
        """The rungs a `rung` request ran when they leave out some of its policy's: the
        verdict speaks for these alone. Empty for a whole ladder."""
        asked = self.request.rungs
        if not asked or self.policy is None or set(POLICIES[self.policy]) <= set(asked):
            return []
        return [r for r in RUNGS if r in asked]

    @property
    def green(self) -> bool:
        """Green on a snapshot that is still the tree's (never when stale), for the whole
        ladder of its policy (never when a `rung` request left some of its rungs out)."""
        return self.state == "green" and not self.stale and not self.covers


class Epoch:
    """The runner's mutable record of one epoch."""

    def __init__(self, number: int, task: str, request: LadderRequest) -> None:
        self.number = number
        self.task = task
        self.requests: list[LadderRequest] = [request]
        self.request = request
        self.state: EpochState = "queued"
        self.snapshot: Snapshot | None = None
        self.touched: list[str] = []
        self.policy: Policy | None = None
        self.rungs: dict[RungName, RungStatus] = {}
        self.results: list[RungResult] = []
        self.result: LadderResult | None = None
        self.stale = False
        self.changed: set[str] = set()
        self.moved_while_running = False
        self.superseded_by: str | None = None
        self.notes: list[str] = []
        self.queued_at = time.time()
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self.duration_s: float | None = None

    def plan(self, rungs: list[RungName]) -> None:
        self.rungs = {
            r: RungStatus(rung=r, task=f"{self.task}.{r}", state="waiting") for r in rungs
        }

    @property
    def current_rung(self) -> RungName | None:
        return next((r for r, s in self.rungs.items() if s.state == "running"), None)

    def rung_started(self, rung: RungName) -> None:
        if rung in self.rungs:
            self.rungs[rung].state = "running"

    def _in_climb_order(self, climbed: list[RungName]) -> None:
        # The rungs as the ladder climbed them (a regeneration runs build.affected second),
        # then the ones not reached in planned order: every view lists them so.
        order = {rung: n for n, rung in enumerate(dict.fromkeys([*climbed, *self.rungs]))}
        self.rungs = dict(sorted(self.rungs.items(), key=lambda item: order[item[0]]))

    def rung_finished(self, result: RungResult) -> None:
        self.results.append(result)
        pid = self.rungs[result.rung].pid if result.rung in self.rungs else None
        self.rungs[result.rung] = RungStatus(
            pid=pid,
            rung=result.rung,
            task=result.task,
            state=result.state,
            reason=result.reason,
            tool=result.tool,
            duration_s=result.duration_s,
            notes=result.notes,
        )
        self._in_climb_order([r.rung for r in self.results])

    def mark_stale(self, paths: list[str]) -> list[str]:
        """Record changed paths; returns those not known before."""
        new = sorted(set(paths) - self.changed)
        self.changed.update(new)
        if new:
            self.stale = True
            if self.finished_at is None:
                self.moved_while_running = True
            elif self.state not in _KEEP_WHEN_STALE:
                self.state = "stale"
        return new

    def refresh(self, changed: list[str]) -> bool:
        """The tree was compared with the snapshot again after the climb: `changed` is what
        differs now. A finished epoch whose tree moved only after it finished follows it,
        back to its own verdict once nothing differs. True when that made it fresh again."""
        if self.finished_at is None or self.moved_while_running or not self.stale:
            return False
        self.changed = set(changed)
        if self.changed:
            return False
        self.stale = False
        if self.result is not None and self.state == "stale":
            self.state = self.result.state
        return True

    def finish(self, result: LadderResult) -> None:
        self.result = result
        self.finished_at = time.time()
        self.duration_s = result.duration_s
        for rung in result.rungs:
            status = self.rungs.get(rung.rung)
            if status is None or status.state in ("waiting", "running"):
                self.rungs[rung.rung] = RungStatus(
                    rung=rung.rung, task=rung.task, state=rung.state, reason=rung.reason
                )
        self._in_climb_order([r.rung for r in result.rungs])
        stale = self.stale and result.state not in _KEEP_WHEN_STALE
        self.state = "stale" if stale else result.state

    def view(self) -> VerifyEpoch:
        snap = self.snapshot
        return VerifyEpoch(
            epoch=self.number,
            task=self.task,
            state=self.state,
            verified_state=self.result.state if self.result else None,
            stale=self.stale,
            changed=sorted(self.changed),
            moved_while_running=self.moved_while_running,
            snapshot=snap.id if snap else None,
            head=snap.head if snap else None,
            policy=self.policy,
            request=self.request,
            requests=len(self.requests),
            superseded_by=self.superseded_by,
            touched=self.touched,
            rungs=list(self.rungs.values()),
            notes=self.notes,
            queued_at=self.queued_at,
            started_at=self.started_at,
            finished_at=self.finished_at,
            duration_s=self.duration_s,
            result=self.result,
        )


def dirty_now(root: Path, paths: list[str]) -> set[str]:
    """Which of `paths` differ from HEAD now (blocking: git)."""
    proc = subprocess.run(
        ["git", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *paths],
        env=git_env(),
        cwd=root,
        capture_output=True,
        check=False,
        timeout=60,
    )
    if proc.returncode != 0:
        return set(paths)  # not git: every write is a change
    entries = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    return {e[3:] for e in entries if len(e) > 3}


def _at_head(root: Path, path: str) -> bool:
    proc = subprocess.run(
        ["git", "cat-file", "-e", f"HEAD:./{path}"],
        env=git_env(),
        cwd=root,
        capture_output=True,
        check=False,
        timeout=60,
    )
    return proc.returncode == 0


def contradicts(root: Path, snapshot: Snapshot, path: str) -> bool:
    """True when a write to `path` makes the tree differ from `snapshot` (blocking: reads it)."""
    return bool(contradicting(root, snapshot, [path]))


_HEAD_COMPARED = 64
"""Clean-at-snapshot paths of one write compared with HEAD's blobs; past it, all count."""


def contradicting(root: Path, snapshot: Snapshot, paths: list[str]) -> list[str]:
    """The `paths` whose write makes the tree differ from `snapshot` (blocking: reads them).
    Dirty at S: only a different content counts (a rewrite of the same bytes does not).
    Clean at S: a content other than HEAD's (one `git ls-tree` for them all), so the watcher's
    late report of a write that put HEAD's content back (a revert written just before the
    verify was asked) is no change "while it ran"; a path gone now that HEAD never had (an
    editor's temp file: `sed -i`'s `sedXXXXXX`, vim's `4913`) was never part of the tree."""
    out: list[str] = []
    clean: list[str] = []
    for path in paths:
        known = snapshot.hashes.get(path)
        if known is not None:
            if file_hash(root / path) != known:
                out.append(path)
        elif os.path.lexists(root / path):
            clean.append(path)
        elif snapshot.in_git and _at_head(root, path):
            out.append(path)
    if not snapshot.in_git or len(clean) > _HEAD_COMPARED:
        return out + clean
    head = _head_blobs(root, clean) if clean else {}
    return out + [p for p in clean if head.get(p) is None or head[p] != _blob_id(root / p)]


def _head_blobs(root: Path, paths: list[str]) -> dict[str, str]:
    """HEAD's blob id of each of `paths` that HEAD has as a regular file."""
    proc = subprocess.run(
        ["git", "ls-tree", "-z", "HEAD", "--", *(f"./{p}" for p in paths)],
        env=git_env(),
        cwd=root,
        capture_output=True,
        check=False,
        timeout=60,
    )
    blobs: dict[str, str] = {}
    if proc.returncode != 0:
        return blobs
    for entry in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, name = entry.partition("\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == "blob" and fields[0].startswith("100"):
            blobs[name] = fields[2]
    return blobs


def _blob_id(path: Path) -> str | None:
    """git's id of `path`'s content as a blob (sha1, or sha256 in such a repository is
    compared as different: stale, the safe side); None for what is not a regular file."""
    if path.is_symlink() or not path.is_file():
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


_READ_HERE = 32
"""Touched files re-read on the event loop itself; more go to a worker thread."""


def _touched_moved(root: Path, snapshot: Snapshot) -> list[str]:
    return sorted(p for p, known in snapshot.hashes.items() if file_hash(root / p) != known)


async def moved_since(
    root: Path, snapshot: Snapshot, notes: list[str], *, watching: bool = False
) -> list[str]:
    """Paths whose content differs from `snapshot` now. Without a watcher: one fresh
    snapshot of the tree (a git process: tens of ms on a busy machine, a third of a
    comment-only verify). With one, every write under the root is reported to the runner
    (`mark_changed`), which marks the epoch stale once its content differs, during the climb
    or after the verdict: here only the change's own files are read again (no git), the
    likeliest to move while it runs, and the one kind the watcher's batching (tens of ms)
    would otherwise let a verdict outrun. A write elsewhere in its last tens of ms is
    reported like one just after the verdict: the epoch goes stale then."""
    try:
        if watching:
            if len(snapshot.hashes) <= _READ_HERE:
                return _touched_moved(root, snapshot)
            return await anyio.to_thread.run_sync(_touched_moved, root, snapshot)
        current = await anyio.to_thread.run_sync(snapshot_of, root)
        return await anyio.to_thread.run_sync(changed_between, root, snapshot, current)
    except (OSError, subprocess.SubprocessError) as exc:
        # Cannot tell whether the tree moved: then it may have, so never green.
        notes.append(f"could not re-read the tree after the climb: {exc}")
        return ["(unknown: the tree could not be read)"]
