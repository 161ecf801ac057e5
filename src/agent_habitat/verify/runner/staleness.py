"""What the runner does at its edges: watching the project, checking a request, and
marking an epoch stale (which written paths contradict its snapshot, and the event).

Kept apart from the runner, which decides *which* epochs a write concerns (the running one,
the newest finished one); this says what a write means for one of them.

Stale is not forever: an epoch that finished and went stale only afterwards follows the
tree, so putting the files back (an undo, `git checkout`) makes it its own verdict again,
with `verify.epoch.fresh`. One the tree moved under while it climbed stays stale: its rungs
may have seen other content than its snapshot's.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

import anyio.abc
import anyio.to_thread

from ...events import EventBus
from ..config import load_ladder_config, load_policy
from ..given_files import given_files
from ..models import LadderRequest
from ..snapshot import Snapshot
from ..toolchains import snapshot_of
from .chain import Chain
from .epochs import changed_between, contradicting, dirty_now
from .watch import ProjectWatcher

__all__ = [
    "against_tree",
    "follow_tree",
    "mark_stale",
    "may_return",
    "project_relative",
    "recheck",
    "start_watcher",
    "validated_request",
    "written_early",
]

logger = logging.getLogger(__name__)


async def start_watcher(
    tg: anyio.abc.TaskGroup, root: Path, on_change: Callable[[list[str]], None], bus: EventBus
) -> bool:
    """Watch `root` in `tg`; False (and `verify.watch.failed`) when no watch can be had."""
    try:
        await tg.start(ProjectWatcher(root, on_change).run)
    except (OSError, RuntimeError) as exc:
        # E.g. the inotify watch limit: staleness then rests on `mark_changed`, the
        # snapshot check of every status and the check on arrival; the journal says so.
        logger.warning("no file watcher on %s: %s", root, exc)
        bus.publish("verify.watch.failed", data={"error": str(exc)})
        return False
    return True


def validated_request(root: Path, request: LadderRequest) -> LadderRequest:
    """Bad configuration or a `--files` path outside the project fails the request at once,
    naming the key or the path."""
    load_ladder_config(root)
    load_policy(root)
    if request.files:
        request = request.model_copy(update={"files": given_files(root, request.files)})
    return request


def project_relative(root: Path, paths: Iterable[str | Path]) -> list[str]:
    """`paths` (absolute or relative to `root`) as POSIX paths relative to it; paths
    outside the project are left out."""
    relative: list[str] = []
    for path in paths:
        candidate = Path(path)
        if candidate.is_absolute():
            try:
                candidate = candidate.relative_to(root)
            except ValueError:
                continue
        relative.append(candidate.as_posix())
    return relative


def mark_stale(bus: EventBus, root: Path, chain: Chain, paths: list[str], phase: str) -> None:
    """Mark `chain`'s epoch stale for the `paths` that contradict its snapshot (for a
    `watch` event: contents differ; otherwise as given) and publish `verify.epoch.stale`
    with the paths that are new to it."""
    snapshot = chain.epoch.snapshot
    chain.writes += 1
    if snapshot is None or not paths:
        return
    if phase == "watch":
        paths = contradicting(root, snapshot, paths)
    new = chain.epoch.mark_stale(paths)
    if not new:
        return
    bus.publish(
        "verify.epoch.stale",
        task=chain.task,
        data={
            "epoch": chain.epoch.number,
            "snapshot": snapshot.id,
            "changed": new,
            "all_changed": sorted(chain.epoch.changed),
            "phase": phase,
        },
    )
    chain.touch()


def follow_tree(bus: EventBus, chain: Chain, changed: list[str], phase: str) -> None:
    """`changed` is what differs from `chain`'s snapshot now (a fresh comparison): a
    finished epoch that went stale after it finished follows it, and is fresh again, with
    `verify.epoch.fresh`, once nothing differs."""
    epoch = chain.epoch
    if not epoch.refresh(changed):
        return
    bus.publish(
        "verify.epoch.fresh",
        task=chain.task,
        data={
            "epoch": epoch.number,
            "snapshot": epoch.snapshot.id if epoch.snapshot else None,
            "state": epoch.state,
            "phase": phase,
        },
    )
    chain.touch()


def may_return(chain: Chain, paths: list[str]) -> bool:
    """A write to `paths` may have put `chain`'s stale epoch back to its snapshot: it
    finished before the tree moved, and one of them is among what differs."""
    epoch = chain.epoch
    return (
        epoch.stale
        and epoch.finished_at is not None
        and not epoch.moved_while_running
        and not epoch.changed.isdisjoint(paths)
    )


async def recheck(bus: EventBus, root: Path, chain: Chain) -> None:
    """Compare the tree with `chain`'s snapshot again (after a write that may have undone
    the change) and follow it. One at a time per chain; a write during the comparison
    makes it compare again, so an older answer never clears a newer write's staleness."""
    snapshot = chain.epoch.snapshot
    if snapshot is None or chain.rechecking:
        return
    chain.rechecking = True
    try:
        while True:
            seen = chain.writes
            current = await anyio.to_thread.run_sync(snapshot_of, root)
            changed = (
                []
                if current.id == snapshot.id
                else await anyio.to_thread.run_sync(changed_between, root, snapshot, current)
            )
            if chain.writes == seen:
                follow_tree(bus, chain, changed, "watch")
                return
    except (OSError, subprocess.SubprocessError) as exc:  # unreadable: it stays stale (safe)
        logger.info("could not compare the tree with %s again: %s", snapshot.id, exc)
    finally:
        chain.rechecking = False


async def written_early(root: Path, chain: Chain, snapshot: Snapshot) -> list[str]:
    """The paths the watcher reported while `chain` took its snapshot that it does not hold.

    Written around the snapshot: a clean path counts only if it is dirty now. Asked of git
    only for those (usually none: the write the watcher reports late is the edit this
    snapshot already holds), which saves a `git status` per verify.
    """
    early = sorted(chain.early_changes)
    chain.early_changes.clear()
    clean = [p for p in early if p not in snapshot.hashes]
    if clean:
        dirty = await anyio.to_thread.run_sync(dirty_now, root, clean)
        early = [p for p in early if p in snapshot.hashes or p in dirty]
    return early


async def against_tree(bus: EventBus, root: Path, chain: Chain | None) -> Snapshot:
    """The tree as it is now, with `chain`'s epoch marked stale (or fresh again) against it."""
    current = await anyio.to_thread.run_sync(snapshot_of, root)
    verified = chain.epoch.snapshot if chain is not None else None
    if chain is not None and verified is not None:
        changed: list[str] = []
        if verified.id != current.id:
            changed = await anyio.to_thread.run_sync(changed_between, root, verified, current)
            mark_stale(bus, root, chain, changed, "status")
        follow_tree(bus, chain, changed, "status")
    return current
