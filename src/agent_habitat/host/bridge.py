"""`habitat mcp` (not embedded): stdio ↔ the workspace host's `/mcp`, message for message.

Every JSON-RPC message from the client is POSTed to the host as it came, and everything
the host sends back — responses, progress, list_changed, resource updates, its own
requests such as `roots/list` — is written to stdout as it came, both protocol eras:
2025-era messages ride the host session (`Mcp-Session-Id`, a GET stream for what the host
sends unasked); 2026-era requests are self-contained, with the routing headers the HTTP
wire wants taken from the request's own `_meta`. (Tools that declare `x-mcp-header`
parameters would also need `Mcp-Param-*` headers; ours declare none.)

When the host goes away — killed, crashed, stopped — the bridge starts it again, replays
the client's `initialize` and `notifications/initialized` (their answers are swallowed;
the client already has them), and goes on. A message the old host never received is
sent to the new one; a request the old host was working on can no longer be answered, so
it gets an answer saying so (a tool error for `tools/call`, else a JSON-RPC error). The
client sees one continuous session; its runs went on in their own sessions meanwhile.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    encode_header_value,
)
from mcp_types import PROTOCOL_VERSION_META_KEY

__all__ = ["HOST_RESTARTED", "Bridge", "Endpoint", "restarted_reply"]

logger = logging.getLogger(__name__)

Message = dict[str, Any]
SESSION_HEADER = "mcp-session-id"
HOST_RESTARTED = (
    "the habitat host stopped while this request was in flight and has been restarted; "
    "the request's outcome is unknown (a command it started may still be running: check "
    "shell_scene / shell_last). Send it again if needed."
)
_INTERNAL_ERROR = -32603
# Restarting a host that dies again at once must end somewhere.
_MAX_ATTEMPTS = 3
_END_SESSION_SECONDS = 1.0


@dataclass(frozen=True)
class Endpoint:
    """Where a host listens: its unix socket, or a TCP base URL with the token."""

    socket: str | None = None
    url: str = "http://localhost"
    token: str | None = None

    def client(self) -> httpx2.AsyncClient:
        transport = httpx2.AsyncHTTPTransport(uds=self.socket) if self.socket else None
        headers = {"authorization": f"Bearer {self.token}"} if self.token else {}
        # No read timeout: a tool call may run for minutes, a GET stream for hours.
        timeout = httpx2.Timeout(None, connect=10.0)
        return httpx2.AsyncClient(
            transport=transport, base_url=self.url, headers=headers, timeout=timeout
        )


class _NotDelivered(Exception):
    """The host did not take the message (not listening, or it knows no such session)."""


class _Broken(Exception):
    """The host took the message, then went away before answering it."""


def _is_request(msg: Message) -> bool:
    return "method" in msg and "id" in msg


def _modern_version(msg: Message) -> str | None:
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def restarted_reply(request: Message) -> Message:
    """The answer to a request the dead host took with it."""
    if request.get("method") == "tools/call":
        result = {"content": [{"type": "text", "text": HOST_RESTARTED}], "isError": True}
        return {"jsonrpc": "2.0", "id": request["id"], "result": result}
    error = {"code": _INTERNAL_ERROR, "message": HOST_RESTARTED}
    return {"jsonrpc": "2.0", "id": request["id"], "error": error}


class Bridge:
    """Relays one client's session to the host, restarting the host when it dies."""

    def __init__(
        self, connect: Callable[[], Awaitable[Endpoint]], send: Callable[[Message], Awaitable[None]]
    ) -> None:
        self._connect = connect
        self._send = send
        self._http: httpx2.AsyncClient | None = None
        self._generation = 0
        self._recovering = anyio.Lock()
        self._initialize: Message | None = None
        self._initialized = False
        self._session: str | None = None
        self._version: str | None = None
        self._in_flight: dict[Any, tuple[anyio.CancelScope, bool]] = {}
        self._cancelled: set[Any] = set()
        self.restarts = 0

    async def run(self, messages: AsyncIterator[Message]) -> None:
        """Relay until `messages` ends (the client closed stdin).

        The client's messages are read apart from the relay, into an unbounded inbox, so
        their end is seen whatever the relay is doing then: waiting on a hung host,
        starting a new one, or delivering a notification. That end stops everything.
        """
        inbox_in, inbox = anyio.create_memory_object_stream[Message](math.inf)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._relay, inbox, tg)
                async with inbox_in:
                    async for msg in messages:
                        inbox_in.send_nowait(msg)
                tg.cancel_scope.cancel()
            await self._end_session()
        finally:
            if self._http is not None:
                await self._http.aclose()

    async def _relay(
        self, inbox: anyio.abc.ObjectReceiveStream[Message], tg: anyio.abc.TaskGroup
    ) -> None:
        self._http = (await self._connect()).client()
        async with inbox:
            async for msg in inbox:
                await self._from_client(msg, tg)

    async def _from_client(self, msg: Message, tg: anyio.abc.TaskGroup) -> None:
        method = msg.get("method")
        if _is_request(msg):
            if method == "initialize":
                self._initialize = dict(msg)
            scope = anyio.CancelScope()
            self._in_flight[msg["id"]] = (scope, _modern_version(msg) is not None)
            tg.start_soon(self._request, msg, scope)
            return
        if method == "notifications/cancelled":
            params = msg.get("params") or {}
            entry = self._in_flight.get(params.get("requestId"))
            if entry is not None and entry[1]:
                entry[0].cancel()  # 2026 over HTTP: closing the response stream is the cancel
                return
            if entry is not None:
                # 2025: the host ends that request's stream without an answer; that end is
                # the cancel taking effect, not the host dying.
                self._cancelled.add(params.get("requestId"))
        await self._deliver(msg)
        if method == "notifications/initialized" and not self._initialized:
            self._initialized = True
            tg.start_soon(self._listen)

    async def _deliver(self, msg: Message) -> None:
        """POST a notification or response; restart the host once if it is gone."""
        for _ in range(_MAX_ATTEMPTS):
            seen = self._generation
            try:
                await self._exchange(msg, self._send)
                return
            except (_NotDelivered, _Broken):
                await self._recover(seen)
        logger.warning("dropped %s: the host keeps failing", msg.get("method", "a response"))

    async def _request(self, msg: Message, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                for _ in range(_MAX_ATTEMPTS):
                    seen = self._generation
                    try:
                        await self._exchange(msg, self._send)
                        return
                    except _NotDelivered:
                        await self._recover(seen)
                    except _Broken:
                        if msg["id"] in self._cancelled:
                            return  # cancelled by the client: no answer is due
                        await self._recover(seen)
                        await self._send(restarted_reply(msg))
                        return
                error = {"code": _INTERNAL_ERROR, "message": "the habitat host keeps failing"}
                await self._send({"jsonrpc": "2.0", "id": msg["id"], "error": error})
        finally:
            self._in_flight.pop(msg["id"], None)
            self._cancelled.discard(msg["id"])

    def _headers(self, msg: Message) -> dict[str, str]:
        headers = {"accept": "application/json, text/event-stream"}
        modern = _modern_version(msg)
        if modern is not None:
            method = msg["method"]
            headers[MCP_PROTOCOL_VERSION_HEADER] = modern
            headers[MCP_METHOD_HEADER] = method
            name_key = NAME_BEARING_METHODS.get(method)
            name = (msg.get("params") or {}).get(name_key) if name_key else None
            if isinstance(name, str):
                headers[MCP_NAME_HEADER] = encode_header_value(name)
            return headers
        if self._session and msg.get("method") != "initialize":
            headers[SESSION_HEADER] = self._session
        if self._version and msg.get("method") != "initialize":
            headers[MCP_PROTOCOL_VERSION_HEADER] = self._version
        return headers

    async def _exchange(
        self,
        msg: Message,
        out: Callable[[Message], Awaitable[None]],
        http: httpx2.AsyncClient | None = None,
    ) -> None:
        """POST one message; pass on everything the host answers, through `out`."""
        http = http or self._http
        assert http is not None
        wants = msg.get("id") if _is_request(msg) else None
        if http.is_closed:
            raise _NotDelivered("the connection to the old host is closed")
        try:
            async with http.stream(
                "POST", "/mcp", json=msg, headers=self._headers(msg)
            ) as response:
                if response.status_code == 404 and self._session and _modern_version(msg) is None:
                    raise _NotDelivered("the host knows no such session (it was restarted)")
                if msg.get("method") == "initialize" and (
                    sid := response.headers.get(SESSION_HEADER)
                ):
                    self._session = sid
                if wants is None:
                    return  # 202 for a notification or response; nothing to pass on
                if response.headers.get("content-type", "").startswith("text/event-stream"):
                    async for sse in httpx2.EventSource(response, max_event_size=None):
                        if sse.data and await self._pass_on(sse.data, wants, out):
                            return
                    raise _Broken("the response stream ended without a response")
                body = (await response.aread()).decode("utf-8", errors="replace")
                if not await self._pass_on(body, wants, out, status=response.status_code):
                    raise _Broken("the host answered without a response")
        except httpx2.ConnectError as exc:
            raise _NotDelivered(str(exc)) from exc
        except httpx2.TransportError as exc:
            raise _Broken(str(exc)) from exc

    async def _pass_on(
        self, data: str, wants: Any, out: Callable[[Message], Awaitable[None]], status: int = 200
    ) -> bool:
        """Forward one message from the host; True when it answers request `wants`."""
        try:
            msg = json.loads(data)
        except json.JSONDecodeError:
            text = data.strip()[:200] or f"HTTP {status}"
            error = {"code": _INTERNAL_ERROR, "message": f"the host answered: {text}"}
            await out({"jsonrpc": "2.0", "id": wants, "error": error})
            return True
        if not isinstance(msg, dict):
            return False
        answers = "method" not in msg and msg.get("id") in (wants, None)
        if answers and msg.get("id") is None:
            msg["id"] = wants  # an error the host raised before it read the id
        if answers and self._initialize is not None and wants == self._initialize.get("id"):
            result = msg.get("result")
            if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                self._version = result["protocolVersion"]
        await out(msg)
        return answers

    async def _listen(self) -> None:
        """The 2025-era GET stream: what the host sends unasked. Its end means a dead host."""
        failures = 0
        while failures < _MAX_ATTEMPTS:
            seen = self._generation
            assert self._http is not None
            try:
                headers = self._headers({})
                headers["accept"] = "text/event-stream"
                async with self._http.stream("GET", "/mcp", headers=headers) as response:
                    if response.status_code == 405:
                        return  # a host without server-initiated messages
                    if response.status_code < 400:
                        failures = 0
                        async for sse in httpx2.EventSource(response, max_event_size=None):
                            if sse.data:
                                await self._pass_on(sse.data, object(), self._send)
            except httpx2.TransportError:
                logger.debug("the host's GET stream broke", exc_info=True)
            failures += 1
            await self._recover(seen)
        logger.warning("gave up on the host's GET stream after %d failures", failures)

    async def _recover(self, seen: int) -> None:
        """Start a host again and replay the handshake, once per failure however many saw it."""
        async with self._recovering:
            if self._generation != seen:
                return
            # Requests keep failing against the old connection (and wait on this lock) until
            # the new one has its session: none can reach the new host before the handshake.
            http = (await self._connect()).client()
            self._session = None
            if self._initialize is not None:
                replay = {**self._initialize, "id": f"habitat-bridge-replay-{self._generation}"}
                try:
                    await self._exchange(replay, self._replay_out(replay["id"]), http)
                    if self._initialized:
                        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                        await self._exchange(initialized, self._send, http)
                except (_NotDelivered, _Broken) as exc:
                    # The new host died too; the caller's next attempt recovers again.
                    logger.warning("the restarted host failed during the handshake replay: %s", exc)
                    await http.aclose()
                    return
            old, self._http = self._http, http
            self._generation += 1
            if old is not None:
                await old.aclose()
            self.restarts += 1
            logger.warning("the habitat host was restarted (restart %d)", self.restarts)

    def _replay_out(self, replay_id: str) -> Callable[[Message], Awaitable[None]]:
        async def out(msg: Message) -> None:
            if msg.get("id") == replay_id and "method" not in msg:
                result = msg.get("result")
                if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                    self._version = result["protocolVersion"]
                return  # the client has its answer to `initialize` already
            await self._send(msg)

        return out

    async def _end_session(self) -> None:
        if self._session is None or self._http is None:
            return
        headers = self._headers({})
        try:
            # A courtesy (the host frees the session); bounded well inside the grace the
            # client gives before it kills us, in case the host is hung.
            with anyio.move_on_after(_END_SESSION_SECONDS):
                await self._http.delete("/mcp", headers=headers)
        except httpx2.TransportError:
            logger.debug("could not end the host session", exc_info=True)
