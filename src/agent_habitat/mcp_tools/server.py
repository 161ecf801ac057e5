"""The low-level MCP server both tool sets are served by, and its stdio entry.

`HabitatServer` differs from the SDK's `Server` in one thing: it advertises
`listChanged` (tools, prompts, resources) to 2025-era clients, which the SDK's default
initialization options deny. Everything else is assembled from parts by `build_server`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server

from agent_habitat import __version__

from .broadcast import Broadcaster
from .prompts import Prompts
from .resources import SceneResource
from .tools import ToolRegistry

__all__ = ["HabitatServer", "build_server", "serve_stdio"]

ALL_CHANGES = NotificationOptions(tools_changed=True, prompts_changed=True, resources_changed=True)

OnConnect = Callable[[ServerSession], Awaitable[None]]


class HabitatServer(Server[Any]):
    """A low-level `Server` whose 2025-era capabilities say `listChanged: true`."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or ALL_CHANGES, experimental_capabilities, extensions
        )


def build_server(
    name: str,
    *,
    instructions: str,
    tools: ToolRegistry,
    broadcaster: Broadcaster,
    scene: SceneResource | None = None,
    prompts: Prompts | None = None,
    on_connect: OnConnect | None = None,
) -> HabitatServer:
    """Wire the parts into one server, serving both protocol eras."""
    server = HabitatServer(
        name,
        version=__version__,
        instructions=instructions,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
        on_list_resources=scene.list_resources if scene else None,
        on_read_resource=scene.read_resource if scene else None,
        on_subscribe_resource=scene.subscribe if scene else None,
        on_unsubscribe_resource=scene.unsubscribe if scene else None,
        on_list_prompts=prompts.list_prompts if prompts else None,
        on_get_prompt=prompts.get_prompt if prompts else None,
        on_subscriptions_listen=broadcaster.listen_handler,
    )

    async def hold_connection(
        ctx: ServerRequestContext[Any, Any], params: types.NotificationParams
    ) -> None:
        # A 2025-era connection announces itself once, here. The handler runs in the
        # connection's task group until the connection ends (then it is cancelled), which
        # is exactly how long the broadcaster should keep sending to it.
        async with broadcaster.connected(ctx.session):
            if on_connect is not None:
                await on_connect(ctx.session)
            await anyio.sleep_forever()

    server.add_notification_handler(
        "notifications/initialized", types.NotificationParams, hold_connection
    )
    return server


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client over this process's stdin/stdout until it closes them."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
