"""`habitat://scene`: the tabs as JSON, subscribable in both protocol eras.

Subscribers hear `notifications/resources/updated` when a tab opens or closes or a
run starts or ends: the shell's events are relayed, a burst coalesced into one update.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError

from agent_habitat.events import Event
from agent_habitat.habitat import Habitat

from .broadcast import Broadcaster

__all__ = ["SCENE_EVENT_KINDS", "SCENE_URI", "SceneResource"]

logger = logging.getLogger(__name__)

SCENE_URI = "habitat://scene"
SCENE_EVENT_KINDS = frozenset(
    {
        "shell.tab.opened",
        "shell.tab.closed",
        "shell.run.started",
        "shell.run.exited",
        "shell.run.killed",
        "shell.run.lost",
    }
)


def _check(uri: str) -> None:
    if uri != SCENE_URI:
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"unknown resource {uri!r}; this server has {SCENE_URI}",
        )


class SceneResource:
    """Lists, reads and announces changes of `habitat://scene`."""

    def __init__(self, habitat: Habitat, broadcaster: Broadcaster) -> None:
        self._habitat = habitat
        self._broadcaster = broadcaster

    def resource(self) -> types.Resource:
        return types.Resource(
            uri=SCENE_URI,
            name="scene",
            title="Shell tabs",
            description="Every shell tab: state, cwd, running pid, last run and an output preview.",
            mime_type="application/json",
        )

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[self.resource()])

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        _check(params.uri)
        scene = await self._habitat.shell.scene()
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=SCENE_URI, mime_type="application/json", text=scene.model_dump_json()
                )
            ]
        )

    async def subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        _check(params.uri)
        self._broadcaster.subscribe(ctx.session, params.uri)
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._broadcaster.unsubscribe(ctx.session, params.uri)
        return types.EmptyResult()

    async def relay_changes(self) -> None:
        """Run until cancelled: turn shell events into `resources/updated` notifications."""
        send, receive = anyio.create_memory_object_stream[str](64)

        def on_event(event: Event) -> None:
            if event.kind in SCENE_EVENT_KINDS:
                try:
                    send.send_nowait(event.kind)
                except anyio.WouldBlock:
                    pass  # an update is already pending; it covers this event too

        unsubscribe = self._habitat.bus.subscribe(on_event)
        try:
            async with receive:
                async for _ in receive:
                    while True:  # coalesce what is already queued: one update covers it
                        try:
                            receive.receive_nowait()
                        except anyio.WouldBlock:
                            break
                    await self._broadcaster.resource_updated(SCENE_URI)
        finally:
            unsubscribe()
            send.close()
