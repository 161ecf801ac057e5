"""Change notifications to every connected client, in both protocol eras.

2025-era clients (the `initialize` handshake) get `notifications/tools/list_changed` and
`notifications/resources/updated` on their connection; we keep those connections
ourselves, from their `notifications/initialized` until they close. 2026-07-28 clients
open `subscriptions/listen` streams instead; those are served by the SDK's
`ListenHandler` from the `InMemorySubscriptionBus` we publish on.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager

import anyio
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourceUpdated,
    ToolsListChanged,
)

__all__ = ["Broadcaster", "connection_key"]

logger = logging.getLogger(__name__)


def connection_key(session: ServerSession) -> int:
    """One key per client connection, whichever request's session we are handed.

    `ServerSession` is built per request, but `client_params` is the connection's own
    `initialize` params object, set once at the handshake — so its identity names the
    connection (the stored session keeps it alive, so the id is not reused meanwhile).
    A connection that skipped `initialize` falls back to the session itself.
    """
    params = session.client_params
    return id(params if params is not None else session)


class Broadcaster:
    """Fans list and resource changes out to 2025 connections and 2026 listen streams."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen_handler = ListenHandler(self.bus)
        self._connections: dict[int, ServerSession] = {}
        self._subscribers: dict[str, dict[int, ServerSession]] = {}

    @property
    def legacy_connections(self) -> int:
        return len(self._connections)

    def subscribers(self, uri: str) -> int:
        return len(self._subscribers.get(uri, {}))

    @asynccontextmanager
    async def connected(self, session: ServerSession) -> AsyncIterator[None]:
        """Track a 2025-era connection while the block runs (the connection's lifetime)."""
        key = connection_key(session)
        self._connections[key] = session
        try:
            yield
        finally:
            self._connections.pop(key, None)
            for subscribers in self._subscribers.values():
                subscribers.pop(key, None)

    def subscribe(self, session: ServerSession, uri: str) -> None:
        self._subscribers.setdefault(uri, {})[connection_key(session)] = session

    def unsubscribe(self, session: ServerSession, uri: str) -> None:
        self._subscribers.get(uri, {}).pop(connection_key(session), None)

    async def tools_changed(self) -> None:
        """`notifications/tools/list_changed` to everyone."""
        for session in list(self._connections.values()):
            await _deliver(session.send_tool_list_changed())
        await self.bus.publish(ToolsListChanged())

    async def prompts_changed(self) -> None:
        """`notifications/prompts/list_changed` to everyone."""
        for session in list(self._connections.values()):
            await _deliver(session.send_prompt_list_changed())
        await self.bus.publish(PromptsListChanged())

    async def resource_updated(self, uri: str) -> None:
        """`notifications/resources/updated` to the subscribers of `uri`."""
        for session in list(self._subscribers.get(uri, {}).values()):
            await _deliver(session.send_resource_updated(uri))
        await self.bus.publish(ResourceUpdated(uri=uri))

    def close(self) -> None:
        """End every open listen stream gracefully."""
        self.listen_handler.close()


async def _deliver(send: Awaitable[None]) -> None:
    # Notifications are advisory: a connection torn down mid-write must not fail the
    # change that triggered them, nor starve the other clients.
    try:
        await send
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
        logger.debug("dropped a change notification: connection closed")
