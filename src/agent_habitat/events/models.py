"""The event record shared by the bus, the journal and every adapter (DESIGN §6)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .kinds import EventKind

__all__ = ["Event", "EventKind"]


class Event(BaseModel):
    """One thing that happened in a workspace."""

    id: int = 0
    """Monotonic id, assigned by the journal (0 before it is journaled)."""
    ts: float
    """Unix time in seconds."""
    kind: str
    """Dotted kind, e.g. `shell.run.exited`: an `EventKind` when published here; a journal
    or another host may hold kinds this one does not know, and readers must accept them."""
    workspace: str
    """The workspace root (or the terminal namespace) the event belongs to."""
    task: str | None = None
    """Verification task id, when the event is about one."""
    tab: str | None = None
    """Shell tab name, when the event is about one."""
    data: dict[str, Any] = Field(default_factory=dict)
    """Kind-specific payload."""
