"""Waiting for something with a bound instead of sleeping.

`EventRecorder` subscribes to a bus and lets a test wait, with a bound, for an event of
a kind — the deterministic alternative to sleeping until something probably happened.
`eventually` polls a condition that has no event of its own (another process wrote a
file, a process appeared), failing after a bound.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

import anyio

from ..events import Event, EventBus

__all__ = ["EventRecorder", "eventually"]

# How often `eventually` looks again; short, since what it waits for is usually quick.
_POLL_SECONDS = 0.01


async def eventually(
    condition: Callable[[], bool] | Callable[[], Awaitable[bool]], within: float = 10.0
) -> None:
    """Return once `condition()` is true (it may be async); TimeoutError after `within` s."""
    with anyio.fail_after(within):
        while True:
            result = condition()
            if inspect.isawaitable(result):
                result = await result
            if result:
                return
            await anyio.sleep(_POLL_SECONDS)


class EventRecorder:
    """Records every event of a bus; `await wait_for(kind)` returns the first match."""

    def __init__(self, bus: EventBus) -> None:
        self.events: list[Event] = []
        self._changed = anyio.Event()
        self.unsubscribe = bus.subscribe(self._record)

    def _record(self, event: Event) -> None:
        self.events.append(event)
        self._changed.set()
        self._changed = anyio.Event()

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]

    async def wait_for(
        self,
        kind: str,
        *,
        where: Callable[[Event], bool] = lambda e: True,
        bound_seconds: float = 10.0,
    ) -> Event:
        """The first recorded event of `kind` matching `where`; TimeoutError after the bound."""
        with anyio.fail_after(bound_seconds):
            while True:
                for event in self.events:
                    if event.kind == kind and where(event):
                        return event
                await self._changed.wait()
