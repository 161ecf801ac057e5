"""Time accounting of MCP calls: one agent session per client connection.

Every tool call runs inside `Habitat.call(session, blocked=…)`. `blocked` is true for a
foreground call that waits on the environment: a foreground `shell_run` / `shell_rerun`, a
`shell_wait`, and `verify_run` with `wait=true`. Sessions are named `mcp-1`, `mcp-2`, … in
the order connections first call.

A connection is the stream its requests come on: `HabitatServer.run` (one call per stream:
stdio, the bridge's, a Streamable HTTP session) marks its requests with `CONNECTION`. The
`initialize` params are no such mark for a 2026-era client, which sends none: the SDK builds
each request's connection, and its params, from that request's envelope.
"""

from __future__ import annotations

import itertools
from contextvars import ContextVar
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.session import ServerSession
from pydantic import BaseModel

from agent_habitat.habitat import Habitat
from agent_habitat.verbs import Progress

from .broadcast import connection_key
from .tools import Handler, ToolDef

__all__ = ["CONNECTION", "SessionNames", "blocks_on_environment"]

CONNECTION: ContextVar[object | None] = ContextVar("habitat_mcp_connection", default=None)
"""The stream a request came on: set by `HabitatServer.run` for the requests it serves."""

_FOREGROUND_RUNS = frozenset({"shell_run", "shell_rerun"})


def blocks_on_environment(tool: str, args: Any) -> bool:
    """True when the call waits on the environment in the foreground."""
    if tool in _FOREGROUND_RUNS:
        return not getattr(args, "background", False)
    if tool == "shell_wait":
        return True
    if tool == "verify_run":
        return bool(getattr(args, "wait", False))
    return False


class SessionNames:
    """`mcp-N` per connection; wraps tool handlers in the habitat's accounting."""

    def __init__(self, habitat: Habitat) -> None:
        self._habitat = habitat
        self._numbers = itertools.count(1)
        # The key object is held too: while it lives its id cannot name another connection.
        self._names: dict[int, tuple[object, str]] = {}

    def name(self, session: ServerSession) -> str:
        stream = CONNECTION.get()
        key = connection_key(session) if stream is None else id(stream)
        known = self._names.get(key)
        if known is None:
            holder = stream or session.client_params or session
            known = self._names[key] = (holder, f"mcp-{next(self._numbers)}")
        return known[1]

    def around(
        self, ctx: ServerRequestContext[Any, Any], tool: ToolDef, args: Any, handler: Handler
    ) -> Handler:
        session = self.name(ctx.session)
        blocked = blocks_on_environment(tool.name, args)

        async def accounted(arguments: Any, progress: Progress | None) -> BaseModel:
            with self._habitat.call(session, blocked=blocked):
                return await handler(arguments, progress)

        return accounted
