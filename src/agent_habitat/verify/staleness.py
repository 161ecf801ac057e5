"""What the runner does at its edges: watching the project, checking a request, and
marking an epoch stale (which written paths contradict its snapshot, and the event).

Kept apart from the runner, which decides *which* epochs a write concerns (the running one,
the newest finished one); this says what a write means for one of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

import anyio.abc

from ..events import EventBus
from .chain import Chain
from .config import load_ladder_config, load_policy
from .epochs import contradicts
from .ladder import _given_files
from .models import LadderRequest
from .watch import ProjectWatcher

__all__ = ["mark_stale", "project_relative", "start_watcher", "validated_request"]

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
        request = request.model_copy(update={"files": _given_files(root, request.files)})
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
    if snapshot is None or not paths:
        return
    if phase == "watch":
        paths = [p for p in paths if contradicts(root, snapshot, p)]
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
