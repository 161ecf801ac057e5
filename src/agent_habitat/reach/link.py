"""The bridge's end of the line exchange (`host/mcp_stream.py`): one `POST /mcp` over the
host's unix socket, JSON lines both ways, for as long as the client's session lasts.

HTTP/1.1 by hand on a plain blocking socket, chunked both ways: a client library sends
the whole request before it reads the response, and this request body never ends while
the session lasts. No asyncio, no h11: the bridge's start is most of the time to the
client's first `tools/list`, and importing asyncio alone cost half of it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

from agent_habitat.errors import HabitatError

__all__ = ["Link", "LinkClosed", "LinkRefused"]

LINE_STREAM_TYPE = "application/x-ndjson"  # host/mcp_stream.py: LINE_STREAM_TYPE
_READ_BYTES = 256 * 1024
_MAX_HEAD_BYTES = 64 * 1024
_REQUEST_HEAD = (
    "POST /mcp HTTP/1.1\r\n"
    "host: localhost\r\n"
    f"content-type: {LINE_STREAM_TYPE}\r\n"
    f"accept: {LINE_STREAM_TYPE}\r\n"
    "transfer-encoding: chunked\r\n"
    "\r\n"
).encode()
_END_OF_BODY = b"0\r\n\r\n"


class LinkClosed(HabitatError):
    """The host is gone (or never took the exchange): the line could not be written."""


class LinkRefused(HabitatError):
    """The host answered the exchange with an error (an older host, a refusal)."""


class _Body:
    """The response body's bytes as they come: chunked, or up to the host's hang-up."""

    def __init__(self, sock: socket.socket, rest: bytes, chunked: bool) -> None:
        self._sock = sock
        self._buf = bytearray(rest)
        self._chunked = chunked

    def _fill(self) -> bool:
        try:
            data = self._sock.recv(_READ_BYTES)
        except OSError:
            return False
        self._buf += data
        return bool(data)

    def __iter__(self) -> Iterator[bytes]:
        if not self._chunked:
            while self._buf or self._fill():
                yield bytes(self._buf)
                self._buf.clear()
            return
        while True:
            while (end := self._buf.find(b"\r\n")) < 0:
                if not self._fill():
                    return
            try:
                size = int(bytes(self._buf[:end]).split(b";")[0], 16)
            except ValueError:
                return  # not HTTP any more: the exchange is over
            if size == 0:
                return  # the host ended the exchange
            while len(self._buf) < end + 2 + size + 2:
                if not self._fill():
                    return
            yield bytes(self._buf[end + 2 : end + 2 + size])
            del self._buf[: end + 2 + size + 2]


class Link:
    """One line exchange with a host: `send_line` and `lines` may run in two threads at
    once; `close` from any thread wakes a `lines` blocked on the socket."""

    def __init__(self, sock: socket.socket, body: _Body) -> None:
        self._sock = sock
        self._body = body
        self._sending = threading.Lock()
        self._ended = False

    @classmethod
    def open(cls, socket_path: str) -> Link:
        """Connect, send the request head and wait for the host to take the exchange."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(socket_path)
        except OSError as exc:
            sock.close()
            raise LinkClosed(f"cannot connect to {socket_path}: {exc}") from exc
        try:
            sock.sendall(_REQUEST_HEAD)
            head = bytearray()
            while (end := head.find(b"\r\n\r\n")) < 0:
                data = sock.recv(_READ_BYTES)
                if not data or len(head) > _MAX_HEAD_BYTES:
                    raise OSError("no response")
                head += data
        except OSError as exc:
            sock.close()
            raise LinkClosed(f"the host at {socket_path} hung up: {exc}") from exc
        status_line, *fields = bytes(head[:end]).decode("latin-1").split("\r\n")
        parts = status_line.split(" ", 2)
        code = parts[1] if len(parts) > 1 else "no response"
        if not status_line.startswith("HTTP/1.") or code != "200":
            sock.close()
            raise LinkRefused(
                f"the host refused the bridge's exchange on /mcp (HTTP {code}); a host older "
                "than this bridge? `habitat host stop` it and the bridge starts a new one"
            )
        headers = {}
        for item in fields:
            name, _, value = item.partition(":")
            headers[name.strip().lower()] = value.strip().lower()
        chunked = "chunked" in headers.get("transfer-encoding", "")
        return cls(sock, _Body(sock, bytes(head[end + 4 :]), chunked))

    def send_line(self, line: bytes) -> None:
        """Write one message (a line, newline included or not)."""
        if not line.endswith(b"\n"):
            line += b"\n"
        with self._sending:
            if self._ended:
                raise LinkClosed("the exchange is over")
            try:
                self._sock.sendall(b"%x\r\n%b\r\n" % (len(line), line))
            except OSError as exc:
                raise LinkClosed(str(exc) or type(exc).__name__) from exc

    def lines(self) -> Iterator[bytes]:
        """The host's lines until it ends the exchange or goes away."""
        pending = b""
        for data in self._body:
            pending += data
            if b"\n" not in data:
                continue
            *done, pending = pending.split(b"\n")
            for line in done:
                if line:
                    yield line + b"\n"

    def close(self) -> None:
        """End the request body (the host ends the session) and hang up, at once: never
        waits on a host that stopped reading."""
        if self._ended:
            return
        self._ended = True
        # Not while a write is blocked (a host that stopped reading): between chunks only.
        if self._sending.acquire(blocking=False):
            with contextlib.suppress(OSError):
                self._sock.send(_END_OF_BODY, socket.MSG_DONTWAIT)
            self._sending.release()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes a reader blocked in recv
        self._sock.close()
