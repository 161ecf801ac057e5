"""`habitat://scene` (the tabs) and `habitat://verify/epoch` (is the code green now?) as
JSON, subscribable in both protocol eras.

Subscribers hear `notifications/resources/updated` when a tab opens or closes or a run
starts or ends (scene), and when an epoch or one of its rungs changes state or the epoch
goes stale (verify): the events are relayed, a burst coalesced into one update per URI.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError

from agent_habitat.errors import HabitatError
from agent_habitat.events import Event
from agent_habitat.habitat import Habitat
from agent_habitat.verify.runner.slot import EPOCH_EVENT_KINDS

from .broadcast import Broadcaster
from .wire import fit, lean_dump

__all__ = ["EPOCH_URI", "SCENE_EVENT_KINDS", "SCENE_URI", "Resources"]

logger = logging.getLogger(__name__)

SCENE_URI = "habitat://scene"
EPOCH_URI = "habitat://verify/epoch"
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


_URIS = (SCENE_URI, EPOCH_URI)


def _compact(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _check(uri: str) -> None:
    if uri not in _URIS:
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"unknown resource {uri!r}; this server has {', '.join(_URIS)}",
        )


_RESOURCES = [
    types.Resource(
        uri=SCENE_URI,
        name="scene",
        title="Shell tabs",
        description="Every shell tab: state, cwd, running pid, last run and an output preview.",
        mime_type="application/json",
    ),
    types.Resource(
        uri=EPOCH_URI,
        name="verify-epoch",
        title="Verify epoch",
        description="Is the code as it is now green? The newest verify epoch, its rungs, and "
        "whether it is stale (files changed since its snapshot).",
        mime_type="application/json",
    ),
]


class Resources:
    """Lists, reads and announces changes of the habitat's resources."""

    def __init__(self, habitat: Habitat, broadcaster: Broadcaster) -> None:
        self._habitat = habitat
        self._broadcaster = broadcaster

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=_RESOURCES)

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        # None: every resource has a fixed URI. Answered (with the SDK's cache hints) rather
        # than "method not found", since `resources` is a declared capability.
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def _json(self, uri: str) -> str:
        # The tools' wire rules (`wire.lean_dump`): nothing null, empty, default or derived.
        if uri == SCENE_URI:
            return _compact(lean_dump(await self._habitat.shell.scene()))
        try:
            return _compact(lean_dump(fit(await self._habitat.verifier.status())))
        except HabitatError as exc:  # e.g. no project open: say so, as the tools would
            return _compact({"green": False, "summary": str(exc)})

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        _check(params.uri)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=params.uri, mime_type="application/json", text=await self._json(params.uri)
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
        """Run until cancelled: turn events into `resources/updated` notifications."""
        pending: set[str] = set()
        wake = anyio.Event()

        def on_event(event: Event) -> None:
            if event.kind in SCENE_EVENT_KINDS:
                pending.add(SCENE_URI)
            elif event.kind in EPOCH_EVENT_KINDS:
                pending.add(EPOCH_URI)
            else:
                return
            wake.set()

        unsubscribe = self._habitat.bus.subscribe(on_event)
        try:
            while True:
                await wake.wait()
                wake = anyio.Event()
                # Everything that happened meanwhile is covered by one update per URI.
                changed = sorted(pending)
                pending.clear()
                for uri in changed:
                    await self._broadcaster.resource_updated(uri)
        finally:
            unsubscribe()
