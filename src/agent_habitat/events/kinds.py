"""Every event kind the habitat publishes, once (DESIGN §6).

`EventKind` is what `EventBus.publish` takes, so mypy checks each publisher; the host
serves `EVENT_KINDS` at `/api/meta` for the dashboard. A stored `Event.kind` stays a
plain string: a journal may hold kinds an older or newer habitat wrote.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["EVENT_KINDS", "EventKind", "RunEnd", "TaskEnd"]

RunEnd = Literal["shell.run.exited", "shell.run.killed", "shell.run.lost"]
"""How a shell run ended."""

TaskEnd = Literal[
    "environment.task.completed",
    "environment.task.failed",
    "environment.task.cancelled",
    "environment.task.died",
]
"""How an environment task (a rung, a chain) ended."""

EventKind = Literal[
    "shell.tab.opened",
    "shell.tab.closed",
    "shell.run.started",
    RunEnd,
    "environment.task.queued",
    "environment.task.started",
    "environment.task.progress",
    TaskEnd,
    "verify.epoch.started",
    "verify.epoch.stale",
    "verify.epoch.fresh",
    "verify.epoch.finished",
    "verify.watch.failed",
    "verify.warmup.finished",
    "verify.recording.started",
    "verify.recording.finished",
    "verify.recording.cancelled",
    "project.opened",
    "project.trusted",
    "file.written",
    "file.edited",
    "host.started",
    "host.stopped",
    "journal.gap",
]
"""A kind the habitat publishes (`journal.gap` is written by the event stream itself)."""


EVENT_KINDS: Final[tuple[EventKind, ...]] = get_args(EventKind)
"""The kinds in `EventKind`, in its order (a nested `Literal` is flattened)."""
