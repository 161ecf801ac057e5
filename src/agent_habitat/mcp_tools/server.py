"""The low-level MCP server both tool sets are served by, and its stdio entry.

`HabitatServer` differs from the SDK's `Server` in one thing: it advertises
`listChanged` (tools, prompts, resources) to 2025-era clients, which the SDK's default
initialization options deny. Everything else is assembled from parts by `build_server`.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import anyio
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession

from agent_habitat import __version__
from agent_habitat.errors import HabitatError

from .accounting import CONNECTION
from .broadcast import Broadcaster
from .handshake import Handshake
from .prompts import Prompts
from .resources import Resources
from .stdio import guarded_stdio
from .tools import ToolRegistry, tool_error

__all__ = ["HabitatServer", "Served", "build_server", "serve_stdio"]

logger = logging.getLogger(__name__)

ALL_CHANGES = NotificationOptions(tools_changed=True, prompts_changed=True, resources_changed=True)

OnRoots = Callable[[ServerSession], Awaitable[None]]
"""Called with a 2025-era client's session when it connects and when its roots change."""


class HabitatServer(Server[Any]):
    """A low-level `Server` whose 2025-era capabilities say `listChanged: true`, and whose
    requests know the stream they came on (`accounting.CONNECTION`)."""

    async def run(self, *args: Any, **kwargs: Any) -> None:
        token = CONNECTION.set(object())  # the handlers' tasks start inside: they inherit it
        try:
            await super().run(*args, **kwargs)
        finally:
            CONNECTION.reset(token)

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
    scene: Resources | None = None,
    prompts: Prompts | None = None,
    on_roots: OnRoots | None = None,
) -> HabitatServer:
    """Wire the parts into one server, serving both protocol eras."""
    server = HabitatServer(
        name,
        version=__version__,
        instructions=instructions,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
        on_list_resources=scene.list_resources if scene else None,
        on_list_resource_templates=scene.list_resource_templates if scene else None,
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
            if on_roots is not None:
                await on_roots(ctx.session)
            await anyio.sleep_forever()

    server.add_notification_handler(
        "notifications/initialized", types.NotificationParams, hold_connection
    )
    server.middleware.append(_name_bad_arguments)
    # Registered by hand: the constructor's `on_set_logging_level` warns that logging is
    # deprecated in 2026-07-28, but 2025-era clients still send `logging/setLevel`.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _set_logging_level)
    if on_roots is not None:
        adopt_roots = on_roots

        async def roots_changed(
            ctx: ServerRequestContext[Any, Any], params: types.NotificationParams
        ) -> None:
            await adopt_roots(ctx.session)

        # Registered by hand: the constructor's `on_roots_list_changed` warns that roots
        # are deprecated in 2026-07-28, but the 2025-era clients in use today send it.
        server.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, roots_changed
        )
    return server


async def _name_bad_arguments(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """`tools/call` whose `arguments` is not an object: a tool error naming `arguments`. The
    SDK's own check answers only "Invalid request parameters", naming nothing."""
    params = ctx.params
    if ctx.method == "tools/call" and params is not None:
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            name = params.get("name")
            return tool_error(
                f"{name}: invalid arguments: `arguments` must be an object of named arguments, "
                f"not {type(arguments).__name__}"
            )
    return await call_next(ctx)


async def _set_logging_level(
    ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
) -> types.EmptyResult:
    # Accepted so 2025-era clients (and the conformance suite) get an answer. The habitat
    # sends no `notifications/message`: what happens is in the event journal and results,
    # and logging is deprecated in the 2026-07-28 revision.
    logger.debug("client asked for log level %s", params.level)
    return types.EmptyResult()


class Served(Protocol):
    """What `primary_server` / `terminal_server` yield: something holding a server."""

    @property
    def server(self) -> HabitatServer: ...


async def serve_stdio(
    name: str,
    open_served: Callable[[], AbstractAsyncContextManager[Served]],
    handshake: Handshake | None = None,
) -> None:
    """Serve one client over stdin/stdout until it closes stdin, or SIGTERM/SIGHUP arrives.

    A signal stops the server the way a client's cancel stops a call: in-flight calls are
    cancelled (a foreground run is killed and recorded as cancelled), background runs go
    on in their own sessions, and the habitat is closed before the process leaves. A
    habitat that cannot open (bad configuration) is reported on stderr, exit status 2.
    A `handshake` started before the SDK was imported may have answered `initialize`
    already (`mcp_tools.handshake`).
    """
    signalled = False
    code: int | None = None
    async with guarded_stdio(handshake) as (read_stream, write_stream):
        try:
            async with open_served() as served, anyio.create_task_group() as tg:

                async def stop_on_signal() -> None:
                    nonlocal signalled
                    with anyio.open_signal_receiver(*_STOP_SIGNALS) as signals:
                        async for _ in signals:
                            signalled = True
                            tg.cancel_scope.cancel()
                            return

                if _STOP_SIGNALS:
                    tg.start_soon(stop_on_signal)
                server = served.server
                await server.run(read_stream, write_stream, server.create_initialization_options())
                tg.cancel_scope.cancel()
        except HabitatError as exc:
            print(f"{name}: {exc}", file=sys.stderr)
            code = 2
        except Exception:  # process boundary: say what broke, then leave (below)
            logger.exception("%s failed", name)
            code = 1
        else:
            code = 0 if signalled else None
        if code is not None:
            # A stdin that is no pipe is read in a worker thread that only a new line or EOF
            # wakes, so leaving `guarded_stdio` would wait on a client that may never write
            # again. Everything this process owns is closed by now: leave without waiting.
            sys.stderr.flush()
            os._exit(code)


_STOP_SIGNALS: tuple[signal.Signals, ...] = (
    () if sys.platform == "win32" else (signal.SIGTERM, signal.SIGHUP)
)
