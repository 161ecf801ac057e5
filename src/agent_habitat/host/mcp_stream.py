"""`/mcp` as one long HTTP exchange of JSON lines: the bridge's way in.

Streamable HTTP costs a request per message: headers, a session lookup, an SSE response
opened and closed, measured at several milliseconds a call on the host alone. The bridge
(`habitat mcp`) instead opens one `POST /mcp` with `Content-Type` and `Accept`
`application/x-ndjson` and keeps it open for the whole client session: its chunked request
body carries the client's messages, one JSON-RPC message per line, and the chunked response
body carries the server's, the same lines an embedded `habitat mcp --embedded` writes to
stdout. Both directions flow at once (HTTP/1.1 lets a server answer while the request body
is still arriving; uvicorn and h11 allow it). Behind it runs the same MCP server, one
connection per exchange exactly as over stdio: both protocol eras, notifications,
cancellation, and the same screen for lines the SDK would drop.

Everything else on `/mcp` (Streamable HTTP clients) goes to the SDK's handler. The exchange
passes the `Guard` like every request, and counts as an open request for idle exit while it
lasts; the bridge leaving (however it leaves) ends it.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_habitat.mcp_tools import HabitatServer
from agent_habitat.mcp_tools.stdio import screen
from agent_habitat.verify.runner.slot import REACHED_THROUGH

__all__ = ["LINE_STREAM_TYPE", "LineStream"]

logger = logging.getLogger(__name__)

LINE_STREAM_TYPE = "application/x-ndjson"
BRIDGE = "the stdio bridge of `habitat mcp`"
# A line longer than this is not a message the server could take; it ends the exchange.
MAX_LINE_BYTES = 64 * 1024 * 1024


def wants_lines(scope: Scope) -> bool:
    """A bridge asking for the line exchange (both headers: nothing else sends them)."""
    if scope.get("method") != "POST":
        return False
    headers = Headers(scope=scope)
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    return kind == LINE_STREAM_TYPE and LINE_STREAM_TYPE in headers.get("accept", "").lower()


class LineStream:
    """ASGI app for `/mcp`: the line exchange for the bridge, else `fallback` (the SDK's)."""

    def __init__(self, server: HabitatServer, fallback: ASGIApp) -> None:
        self.server = server
        self.fallback = fallback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not wants_lines(scope):
            await self.fallback(scope, receive, send)
            return
        await _Exchange(self.server, receive, send).serve()


class _Exchange:
    """One bridge's session: lines in from the request body, lines out in the response."""

    def __init__(self, server: HabitatServer, receive: Receive, send: Send) -> None:
        self.server = server
        self._receive = receive
        self._send = send
        self._sending = anyio.Lock()
        self._open = True

    async def serve(self) -> None:
        # Every call of this exchange (its handlers start from this task) came through the
        # bridge: what answers verify_status names the client's own process and the host.
        token = REACHED_THROUGH.set(BRIDGE)
        try:
            await self._serve()
        finally:
            REACHED_THROUGH.reset(token)

    async def _serve(self) -> None:
        start = {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", LINE_STREAM_TYPE.encode()),
                (b"cache-control", b"no-store"),
            ],
        }
        await self._send(start)
        to_server, from_client = create_context_streams[SessionMessage | Exception](0)
        to_client, from_server = create_context_streams[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._read, to_server)
            tg.start_soon(self._write, from_server)
            server = self.server
            await server.run(from_client, to_client, server.create_initialization_options())
            tg.cancel_scope.cancel()
        if self._open:
            await self._emit(b"", more=False)

    async def _read(self, to_server: Any) -> None:
        """The request body, split into lines, each screened like a stdio line."""
        pending = b""
        async with to_server:
            while True:
                event = await self._receive()
                if event["type"] != "http.request":
                    self._open = False  # http.disconnect: the bridge is gone
                    return
                pending += event.get("body", b"")
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    await self._take(line, to_server)
                if len(pending) > MAX_LINE_BYTES:
                    logger.warning("a line over %d bytes from the bridge: closing", MAX_LINE_BYTES)
                    return
                if not event.get("more_body", False):
                    if pending.strip():
                        await self._take(pending, to_server)
                    return  # the bridge ended its request body: the session is over

    async def _take(self, line: bytes, to_server: Any) -> None:
        text = line.decode("utf-8", "replace")
        verdict = screen(text)
        if verdict.message is not None:  # parsed by the screen, once
            await to_server.send(SessionMessage(verdict.message))
        elif verdict.reply is not None:
            await self._emit(verdict.reply.encode() + b"\n")

    async def _write(self, from_server: Any) -> None:
        async with from_server:
            async for item in from_server:
                line = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                await self._emit(line.encode() + b"\n")

    async def _emit(self, body: bytes, *, more: bool = True) -> None:
        if not self._open:
            return
        async with self._sending:
            try:
                await self._send({"type": "http.response.body", "body": body, "more_body": more})
            except OSError:
                self._open = False  # the bridge went away mid-write
