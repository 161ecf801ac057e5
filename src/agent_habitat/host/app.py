"""The host's HTTP application: `/mcp`, `/events`, `/api/…`, behind the `Guard`.

`build_mcp` is the one place that decides what the host serves: the workspace's services
from the composition root (`Habitat.open`) and the primary MCP server over them. That server
(`McpSide`) is built after the host starts, once it has been quiet a moment (or by the first
request for `/mcp`, if that comes sooner): importing the MCP SDK is most of a host's start-up
CPU (1.0 of 1.5 s), so it is not on the way to listening, nor in the way of the commands a
person types right after the start; and an agent's first `tools/list` does not pay it.

The JSON API (`host.api`: `/api/verbs`, `/api/shell_run`, … — the same service functions as
the MCP tools, derived from the verb table) joins `/api/status` here, behind the same
`Guard` (token on TCP, Host/Origin everywhere).
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_habitat import __version__
from agent_habitat.errors import UsageError
from agent_habitat.events import EventBus
from agent_habitat.habitat import Habitat
from agent_habitat.reach.files import HostFiles
from agent_habitat.shell import Shell
from agent_habitat.workspace import Workspace

if TYPE_CHECKING:
    from agent_habitat.mcp_tools import HabitatServer

from .api import api_routes
from .credentials import Credentials
from .dashboard import Logins, dashboard_routes
from .events_stream import EventStream
from .guard import Guard, over_tcp
from .token_route import token_route

__all__ = ["Activity", "HostApp", "Hosted", "McpSide", "build_app", "build_mcp", "warm"]


class McpSide:
    """`/mcp`: the primary MCP server over the habitat behind the SDK's Streamable HTTP
    sessions, with the bridge's line exchange in front (`mcp_stream`). Built, SDK import
    included, by `prepare` (the host calls it once it has been quiet a moment after its
    start) or by the first request for `/mcp`, whichever comes first; it lives, as the SDK's
    session manager did, while `serving()` is open: the host's serving time."""

    def __init__(self, habitat: Habitat, *, freeze_heap: bool = False) -> None:
        self._habitat = habitat
        self._freeze_heap = freeze_heap
        self._building = anyio.Lock()
        self._app: ASGIApp | None = None
        self._server: HabitatServer | None = None
        self._tasks: TaskGroup | None = None

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            try:
                yield
            finally:
                self._tasks = None
                tasks.cancel_scope.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self._app or await self._built()
        await app(scope, receive, send)

    async def _built(self) -> ASGIApp:
        async with self._building:
            if self._app is None:
                if self._tasks is None:
                    raise RuntimeError("the host's MCP side is not serving")
                self._app = await self._tasks.start(self._serve)
                if self._freeze_heap:
                    _freeze_heap()
            return self._app

    async def server(self) -> HabitatServer:
        """The primary MCP server (built first if need be), for a stdio session of its own."""
        await self._built()
        assert self._server is not None
        return self._server

    async def prepare(self) -> None:
        """Build it ahead of the first `/mcp`: the SDK imported in a worker thread (the
        event loop keeps answering the CLI meanwhile), then the server built, so an agent's
        first `tools/list` pays neither."""
        import anyio.to_thread

        # Abandoned on cancel: a host told to stop does not wait for an import to finish.
        await anyio.to_thread.run_sync(_import_sdk, abandon_on_cancel=True)
        await self._built()

    async def _serve(self, *, task_status: TaskStatus[ASGIApp]) -> None:
        from mcp.server.streamable_http_manager import (
            StreamableHTTPASGIApp,
            StreamableHTTPSessionManager,
        )
        from mcp.server.transport_security import TransportSecuritySettings

        from agent_habitat.mcp_tools import primary_server

        from .mcp_stream import LineStream

        async with primary_server(self._habitat) as primary:
            self._server = primary.server
            sessions = StreamableHTTPSessionManager(
                app=primary.server,
                # The Guard checks Host/Origin for every route; the SDK's own check would
                # only repeat it for /mcp, and would reject a unix socket's port-less
                # `Host: localhost`.
                security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            )
            async with sessions.run():
                task_status.started(LineStream(primary.server, StreamableHTTPASGIApp(sessions)))
                await anyio.sleep_forever()


_SDK_MODULES = (
    "mcp.server.streamable_http_manager",
    "mcp.server.transport_security",
    "agent_habitat.mcp_tools",
    "agent_habitat.host.mcp_stream",
    "agent_habitat.host.stdio_session",
)
"""What `McpSide._serve` imports: most of the MCP side's cost, paid off the event loop."""


def _import_sdk() -> None:
    import importlib

    for name in _SDK_MODULES:
        importlib.import_module(name)


@dataclass
class Hosted:
    """What the host serves: the state of the workspace and the MCP side over it."""

    habitat: Habitat
    mcp: McpSide

    @property
    def shell(self) -> Shell:
        return self.habitat.shell

    @property
    def bus(self) -> EventBus:
        return self.habitat.bus


@asynccontextmanager
async def build_mcp(project: Path, *, freeze_heap: bool = False) -> AsyncIterator[Hosted]:
    """Open the workspace's habitat and its MCP server for the host (switch point).

    `freeze_heap`: the host process's own (`serve_host`), never a test's or a CLI's, whose
    older objects may still become garbage: what lives once the habitat is open, and again
    once the MCP side is built, leaves the collector's generations (`_freeze_heap`)."""
    async with Habitat.open(Workspace.for_project(project), project=project) as habitat:
        # A caller is a CLI or a bridge in a process of its own: "this process" is not this one.
        habitat.verifier.serves_as = "the workspace host"
        hosted = Hosted(habitat=habitat, mcp=McpSide(habitat, freeze_heap=freeze_heap))
        if freeze_heap:
            _freeze_heap()
        yield hosted


def _freeze_heap() -> None:
    """Take every object alive now (the imports, the habitat; then the MCP SDK and server)
    out of the cyclic collector's generations for the host's life (`gc.freeze`, O(1)): a
    full collection walked them all, about 100,000 objects once the MCP side was built, 66-70
    ms of CPU holding the event loop, 275-458 ms at load 18-20 with 8 loud tabs, for every
    caller at once. Garbage among them would be kept, never collected: a collection at both
    moments found none (0 of 52,535 objects, then 0 of 100,654)."""
    gc.freeze()


class Activity:
    """Counts the requests in flight (a connected client holds one open) and when the last
    one ended: what idle exit and `host status` go by."""

    def __init__(self, app: ASGIApp, *, quiet_paths: frozenset[str]) -> None:
        self.app = app
        self.quiet_paths = quiet_paths
        self.open = 0
        self.last_seen = time.monotonic()

    def touch(self) -> None:
        self.last_seen = time.monotonic()

    def quiet_for(self) -> float:
        return 0.0 if self.open else time.monotonic() - self.last_seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in self.quiet_paths:
            await self.app(scope, receive, send)
            return
        self.open += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open -= 1
            self.touch()


def warm(workspace: Workspace) -> dict[str, Any]:
    """The warm tool daemons of the workspace: the dmypy daemon's state and pid, the warm
    checkers' language servers (tool, pid, owner), the warm pytest (or why runs are fresh),
    and a warm-up still under way (`warmup`, only while there is one)."""
    # Here, at the first `/api/status`: the warm tools' modules are not on a host's way to
    # listening.
    from agent_habitat.verify.rungs import DmypyDaemon, warm_checker
    from agent_habitat.verify.runner.warm_status import pytest_glance, warmup_glance

    daemon = DmypyDaemon(workspace)
    state = daemon.state()
    out: dict[str, Any] = {
        "dmypy": {"state": state, "pid": daemon.pid() if state == "alive" else None},
        "checkers": warm_checker.live(workspace),
        "pytest": pytest_glance(workspace),
    }
    if (glance := warmup_glance(workspace)) is not None:
        out["warmup"] = glance
    return out


@dataclass
class HostApp:
    """The assembled application and the parts the host process drives."""

    asgi: ASGIApp
    activity: Activity
    events: EventStream
    credentials: Credentials
    info: dict[str, Any] = field(default_factory=dict)
    open_tcp: Callable[[tuple[str, int]], Awaitable[str]] | None = None
    """Opens the loopback TCP listener (set once the host listens)."""


DEFAULT_LOOPBACK = "127.0.0.1:0"
"""Where `POST /api/host/tcp` listens unless told: loopback, any free port."""


def build_app(
    hosted: Hosted,
    *,
    token: str | None,
    extra_hosts: tuple[str, ...] = (),
    idle_seconds: float,
    files: HostFiles | None = None,
) -> HostApp:
    """Routes, session manager and middleware; `info` is filled in once the host listens.
    `files`: where a rotated token is written (without them it lives in memory only)."""
    credentials = Credentials(token, rotate_file=files.rotate_token if files else None)
    events = EventStream(hosted.habitat.journal, hosted.bus)
    started = time.time()
    host_app: HostApp

    async def status(request: Request) -> Response:
        scene = await hosted.shell.scene()
        running = [
            {"tab": t.name, "pid": t.pid, "command": t.last_run.command if t.last_run else None}
            for t in scene.tabs
            if t.state == "running"
        ]
        activity = host_app.activity
        warmup = hosted.habitat.verifier.warmup
        return JSONResponse(
            {
                "pid": os.getpid(),
                "version": __version__,
                "started_at": started,
                "uptime_s": round(time.time() - started, 3),
                "clients": activity.open,
                "event_streams": events.open_streams,
                "tabs": [{"name": t.name, "state": t.state, "cwd": t.cwd} for t in scene.tabs],
                "running": running,
                "warm": warm(hosted.habitat.workspace),
                # The warm-up waits until the project is trusted (trust.py): nothing has run.
                "waiting_for_trust": bool(warmup and warmup.waiting_for_trust),
                "idle_seconds": idle_seconds,
                "idle_for_s": round(activity.quiet_for(), 3),
                **host_app.info,
            }
        )

    async def open_tcp(request: Request) -> Response:
        # Only the socket's owner may make the host reachable over the network, and only on
        # loopback; the listener then asks every request for the token, as one started so.
        from .tcp_address import parse_tcp

        if over_tcp(request.scope):
            return JSONResponse({"error": "open TCP over the unix socket"}, status_code=403)
        try:
            body = await request.json() if await request.body() else {}
            where = parse_tcp(str(body.get("tcp") or DEFAULT_LOOPBACK), allow_remote=False)
        except (ValueError, AttributeError, UsageError) as exc:
            return JSONResponse({"error": str(exc), "field": "tcp"}, status_code=400)
        if host_app.open_tcp is None:
            return JSONResponse({"error": "the host is still starting"}, status_code=503)
        try:
            url = await host_app.open_tcp(where)
        except OSError as exc:
            return JSONResponse({"error": f"cannot listen on {where}: {exc}"}, status_code=409)
        return JSONResponse({"tcp": url})

    # Every path is a literal, so the order only says how many a request is matched against
    # (a regex each, ~3 us): the MCP endpoint and the verbs first, the dashboard's page and
    # assets last (a shell_last came 21st, a twentieth of the host's CPU for the call).
    routes = [
        # The bridge's line exchange (host/mcp_stream.py), else Streamable HTTP.
        Route("/mcp", hosted.mcp),
        *api_routes(hosted.habitat),
        Route("/events", events.endpoint, methods=["GET"]),
        Route("/api/status", status, methods=["GET"]),
        Route("/api/host/tcp", open_tcp, methods=["POST"]),
        token_route(credentials, files),
        *dashboard_routes(credentials=credentials, logins=(logins := Logins())),
    ]
    activity = Activity(Starlette(routes=routes), quiet_paths=frozenset({"/api/status"}))
    guarded = Guard(activity, credentials=credentials, extra_hosts=extra_hosts, login=logins.redeem)
    host_app = HostApp(
        asgi=guarded,
        activity=activity,
        events=events,
        credentials=credentials,
    )
    return host_app
