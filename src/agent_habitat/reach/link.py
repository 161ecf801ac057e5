"""The bridge's end of the line exchange (`host/mcp_stream.py`): one `POST /mcp` over the
host's unix socket, JSON lines both ways, for as long as the client's session lasts.

HTTP/1.1 by hand with h11 (already there under uvicorn), not an HTTP client library: a
library sends the whole request before it reads the response, and this request body never
ends while the session lasts.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import anyio
import h11

from agent_habitat.errors import HabitatError

__all__ = ["Link", "LinkClosed", "LinkRefused"]

LINE_STREAM_TYPE = "application/x-ndjson"  # host/mcp_stream.py: LINE_STREAM_TYPE
_READ_BYTES = 256 * 1024
_MAX_REFUSAL_BYTES = 4096


class LinkClosed(HabitatError):
    """The host is gone (or never took the exchange): the line could not be written."""


class LinkRefused(HabitatError):
    """The host answered the exchange with an error (an older host, a refusal)."""


class Link:
    """One line exchange with a host: `send_line` and `lines` may run in two tasks at once.

    On asyncio's own streams, not anyio's socket: they keep the socket registered with the
    event loop and buffer what arrives, where anyio's registers and unregisters it for
    every read, a system call or two per message each way.
    """

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, conn: h11.Connection
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._conn = conn

    @classmethod
    async def open(cls, socket_path: str) -> Link:
        """Connect, send the request head and wait for the host to take the exchange."""
        try:
            reader, writer = await asyncio.open_unix_connection(socket_path, limit=_READ_BYTES)
        except OSError as exc:
            raise LinkClosed(f"cannot connect to {socket_path}: {exc}") from exc
        conn = h11.Connection(h11.CLIENT)
        request = h11.Request(
            method="POST",
            target="/mcp",
            headers=[
                ("host", "localhost"),
                ("content-type", LINE_STREAM_TYPE),
                ("accept", LINE_STREAM_TYPE),
                ("transfer-encoding", "chunked"),
            ],
        )
        link = cls(reader, writer, conn)
        try:
            writer.write(conn.send(request))
            await writer.drain()
            response = await link._next_event()
        except (OSError, h11.ProtocolError) as exc:
            writer.close()
            raise LinkClosed(f"the host at {socket_path} hung up: {exc}") from exc
        if not isinstance(response, h11.Response) or response.status_code != 200:
            writer.close()
            code = getattr(response, "status_code", "no response")
            raise LinkRefused(
                f"the host refused the bridge's exchange on /mcp (HTTP {code}); a host older "
                "than this bridge? `habitat host stop` it and the bridge starts a new one"
            )
        return link

    async def _next_event(self) -> h11.Event | type[h11.ConnectionClosed]:
        while True:
            event = self._conn.next_event()
            if event is h11.NEED_DATA:
                self._conn.receive_data(await self._reader.read(_READ_BYTES))
                continue
            assert event is not h11.PAUSED  # only a server pauses
            return event  # type: ignore[return-value]

    async def send_line(self, line: bytes) -> None:
        """Write one message (a line, newline included or not)."""
        if not line.endswith(b"\n"):
            line += b"\n"
        try:
            data = self._conn.send(h11.Data(data=line))
        except h11.LocalProtocolError as exc:  # the exchange is over already
            raise LinkClosed(str(exc)) from exc
        # A write to a closed transport is dropped without a word; `drain` says so.
        self._writer.write(data or b"")
        try:
            await self._writer.drain()
        except (OSError, RuntimeError) as exc:
            raise LinkClosed(str(exc) or type(exc).__name__) from exc

    async def lines(self) -> AsyncIterator[bytes]:
        """The host's lines until it ends the exchange or goes away."""
        pending = b""
        while True:
            try:
                event = await self._next_event()
            except (OSError, h11.RemoteProtocolError):
                return
            if not isinstance(event, h11.Data):
                return  # EndOfMessage or ConnectionClosed: the exchange is over
            data = bytes(event.data)
            pending += data
            if b"\n" not in data:
                continue
            *done, pending = pending.split(b"\n")
            for line in done:
                if line:
                    yield line + b"\n"

    async def aclose(self) -> None:
        """End the request body (the host ends the session) and hang up."""
        writer = self._writer
        if not writer.is_closing():
            try:
                writer.write(self._conn.send(h11.EndOfMessage()) or b"")
            except h11.ProtocolError:
                pass
        writer.close()
        with anyio.move_on_after(1.0), contextlib.suppress(OSError):  # a hung host
            await writer.wait_closed()
