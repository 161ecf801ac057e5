"""The bridge's end of the line exchange (`host/mcp_stream.py`): one `POST /mcp` over the
host's unix socket, JSON lines both ways, for as long as the client's session lasts.

HTTP/1.1 by hand with h11 (already there under uvicorn), not an HTTP client library: a
library sends the whole request before it reads the response, and this request body never
ends while the session lasts.
"""

from __future__ import annotations

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
    """One line exchange with a host: `send_line` and `lines` may run in two tasks at once."""

    def __init__(self, stream: anyio.abc.SocketStream, conn: h11.Connection) -> None:
        self._stream = stream
        self._conn = conn

    @classmethod
    async def open(cls, socket_path: str) -> Link:
        """Connect, send the request head and wait for the host to take the exchange."""
        try:
            stream = await anyio.connect_unix(socket_path)
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
        link = cls(stream, conn)
        try:
            await stream.send(conn.send(request))
            response = await link._next_event()
        except (OSError, anyio.BrokenResourceError, anyio.EndOfStream, h11.ProtocolError) as exc:
            await stream.aclose()
            raise LinkClosed(f"the host at {socket_path} hung up: {exc}") from exc
        if not isinstance(response, h11.Response) or response.status_code != 200:
            await stream.aclose()
            code = getattr(response, "status_code", "no response")
            raise LinkRefused(f"the host refused the bridge's exchange on /mcp (HTTP {code})")
        return link

    async def _next_event(self) -> h11.Event:
        while True:
            event = self._conn.next_event()
            if event is h11.NEED_DATA:
                self._conn.receive_data(await self._stream.receive(_READ_BYTES))
                continue
            assert not isinstance(event, type), event  # h11.PAUSED: not for a client
            return event

    async def send_line(self, line: bytes) -> None:
        """Write one message (a line, newline included or not)."""
        if not line.endswith(b"\n"):
            line += b"\n"
        try:
            await self._stream.send(self._conn.send(h11.Data(data=line)))
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise LinkClosed(str(exc) or type(exc).__name__) from exc
        except h11.LocalProtocolError as exc:  # the host ended the exchange already
            raise LinkClosed(str(exc)) from exc

    async def lines(self) -> AsyncIterator[bytes]:
        """The host's lines until it ends the exchange or goes away."""
        pending = b""
        while True:
            try:
                event = await self._next_event()
            except (
                OSError,
                anyio.BrokenResourceError,
                anyio.ClosedResourceError,
                anyio.EndOfStream,
                h11.RemoteProtocolError,
            ):
                return
            if not isinstance(event, h11.Data):
                return  # EndOfMessage or ConnectionClosed: the exchange is over
            pending += event.data
            if b"\n" not in event.data:
                continue
            *done, pending = pending.split(b"\n")
            for line in done:
                if line:
                    yield line + b"\n"

    async def aclose(self) -> None:
        """End the request body (the host ends the session) and hang up."""
        with anyio.move_on_after(1.0):  # a hung host must not keep the bridge
            try:
                await self._stream.send(self._conn.send(h11.EndOfMessage()))
            except (
                OSError,
                anyio.BrokenResourceError,
                anyio.ClosedResourceError,
                h11.ProtocolError,
            ):
                pass
        await self._stream.aclose()
