"""`/events`: the workspace journal as server-sent events, resumable without loss.

Each event goes out as `id: N`, `event: KIND`, `data: {event JSON}`. A client resumes with
`?since=N` or the standard `Last-Event-ID: N` header (browsers' EventSource sends it on
reconnect) and gets every event after N, in order. No event can be lost between the
backlog and the live part because there is no live part of its own: the stream always
reads the journal (the one ordered record, also written by other processes such as an
embedded CLI) after its cursor; the bus only wakes it early. When the bounded journal has
already dropped events after the cursor, a `journal.gap` event says how many ids are gone.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Protocol

import anyio
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse

from agent_habitat.events import Event, EventBus


class Journal(Protocol):
    """What the stream reads: the habitat's journal (`Habitat.journal`)."""

    def since(self, event_id: int = 0, limit: int = 1000) -> list[Event]: ...


__all__ = ["EventStream"]

# Other processes append to the journal without telling our bus: look this often.
POLL_SECONDS = 0.5
# A comment line this often keeps proxies and idle-read timeouts from closing the stream.
KEEPALIVE_SECONDS = 15.0
_BATCH = 500


def _frame(event: Event) -> bytes:
    data = event.model_dump_json()
    return f"id: {event.id}\nevent: {event.kind}\ndata: {data}\n\n".encode()


class EventStream:
    """Serves `/events` from a journal, woken by the bus it is fed from."""

    def __init__(self, journal: Journal, bus: EventBus) -> None:
        self.journal = journal
        self.bus = bus
        self.open_streams = 0

    async def endpoint(self, request: Request) -> Response:
        raw = request.query_params.get("since") or request.headers.get("last-event-id") or "0"
        try:
            since = int(raw)
        except ValueError:
            return PlainTextResponse(
                f"since / Last-Event-ID must be an event id (an integer), not {raw!r}\n",
                status_code=400,
            )
        return StreamingResponse(
            self._frames(max(0, since)),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _frames(self, cursor: int) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        woken = anyio.Event()

        def wake(_: Event) -> None:
            # Publishers may sit in a worker thread; an anyio.Event is set on its own loop.
            loop.call_soon_threadsafe(woken.set)

        unsubscribe = self.bus.subscribe(wake)
        self.open_streams += 1
        try:
            yield b": agent-habitat events\n\n"
            quiet = 0.0
            while True:
                # Reset before reading: an event appended after the read still wakes us.
                woken = anyio.Event()
                # The journal query is an indexed range read of a few rows; it runs on the
                # loop because the habitat's SQLite connection is used from the loop only.
                events = self.journal.since(cursor, _BATCH)
                chunk = b""
                if events and events[0].id is not None and events[0].id > cursor + 1 and cursor:
                    chunk = _gap(cursor, events[0].id)
                # What one read found goes out as one write: the client reads it at once (a
                # browser parses it in one task) instead of once per event.
                chunk += b"".join(_frame(event) for event in events)
                if events:
                    cursor = events[-1].id or cursor
                if chunk:
                    yield chunk
                if len(events) == _BATCH:
                    continue
                if quiet >= KEEPALIVE_SECONDS:
                    yield b": keepalive\n\n"
                    quiet = 0.0
                with anyio.move_on_after(POLL_SECONDS):
                    await woken.wait()
                quiet += POLL_SECONDS
        finally:
            self.open_streams -= 1
            unsubscribe()


def _gap(cursor: int, first: int) -> bytes:
    data = json.dumps({"kind": "journal.gap", "data": {"after": cursor, "next": first}})
    return f"event: journal.gap\ndata: {data}\n\n".encode()
