"""Time accounting of MCP calls: one agent session per client connection.

Every tool call runs inside `Habitat.call(session, blocked=…)`. `blocked` is true for a
foreground call that waits on the environment: a foreground `shell_run` / `shell_rerun`, a
`shell_wait`, and `verify_run` with `wait=true`. Sessions are named `mcp-1`, `mcp-2`, … in
the order connections first call.
"""

from __future__ import annotations

import itertools
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.session import ServerSession
from pydantic import BaseModel

from agent_habitat.habitat import Habitat
from agent_habitat.verbs import Progress

from .broadcast import connection_key
from .tools import Handler, ToolDef

__all__ = ["SessionNames", "blocks_on_environment"]

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
        key = connection_key(session)
        known = self._names.get(key)
        if known is None:
            holder = session.client_params if session.client_params is not None else session
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
