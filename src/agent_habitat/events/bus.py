"""In-process publish/subscribe for events.

A subscription returns its own unsubscribe. A subscriber that raises is logged and
isolated: the publisher and the other subscribers never see its error.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..secrets import redact_data
from .kinds import EventKind
from .models import Event

__all__ = ["EventBus", "InMemoryEventBus", "Subscriber", "Unsubscribe"]

logger = logging.getLogger(__name__)

Subscriber = Callable[[Event], None]
Unsubscribe = Callable[[], None]


class Journal(Protocol):
    def append(self, event: Event) -> Event: ...


class EventBus(Protocol):
    """The seam every service publishes through."""

    def publish(
        self,
        kind: EventKind,
        *,
        tab: str | None = None,
        task: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> Event: ...

    def subscribe(self, subscriber: Subscriber) -> Unsubscribe: ...


class InMemoryEventBus:
    """Delivers events synchronously to subscribers; journals them first when given a journal."""

    def __init__(self, workspace: str, journal: Journal | None = None) -> None:
        self.workspace = workspace
        self._journal = journal
        self._subscribers: list[Subscriber] = []
        self._next_id = 1

    def publish(
        self,
        kind: EventKind,
        *,
        tab: str | None = None,
        task: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> Event:
        # Redacted here, before the journal and every subscriber see it: nothing downstream
        # (the journal, the dashboard, an MCP client) ever holds a secret of the environment.
        event = Event(
            ts=time.time(),
            kind=kind,
            workspace=self.workspace,
            tab=tab,
            task=task,
            data=redact_data(data or {}),
        )
        if self._journal is not None:
            event = self._journal.append(event)
        else:
            event.id = self._next_id
            self._next_id += 1
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception:  # a subscriber's bug must not break the publisher
                logger.exception("event subscriber %r failed on %s", subscriber, event.kind)
        return event

    def subscribe(self, subscriber: Subscriber) -> Unsubscribe:
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe
