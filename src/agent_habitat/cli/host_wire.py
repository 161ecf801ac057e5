"""One JSON call to the workspace host over its unix socket, with the standard library.

The CLI commands that hand work to the host (`habitat verify`, `status`, `cancel`) must
cost a person no more than the work: the host already holds the warm state, so the
client's part is a socket, one HTTP/1.1 request and `json`. The socket needs no token
(only the user can open it, see reach/files.py); `reach.plain_client.host_of` finds it.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..reach.plain_client import dechunk

__all__ = ["HostAnswer", "HostRefused", "HostUnreachable", "call", "live_socket", "stream"]


class HostUnreachable(OSError):
    """The host did not take or answer the call (gone, hung, or not a host)."""


HostAnswer = tuple[int, Any]
"""(HTTP status, the JSON body)."""


def live_socket(root: Path) -> str | None:
    """The socket of the host serving the workspace at `root`, while one is live
    (`reach.plain_client.host_of`: StateNotSafe for a state folder others may write)."""
    from ..reach.plain_client import host_of

    host = host_of(root)
    return None if host is None else host.path


def _request(route: str, body: dict[str, Any]) -> bytes:
    data = json.dumps(body).encode()
    head = (
        f"POST {route} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode()
    return head + data


def stream(path: str, route: str, body: dict[str, Any]) -> Iterator[Any]:
    """POST `body` and yield the JSON lines of a 200 answer as they come (no read timeout:
    it lasts as long as its work). Another status: `HostRefused` with the error body."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(10.0)
            conn.connect(path)
            conn.sendall(_request(route, body))
            conn.settimeout(None)
            with conn.makefile("rb") as f:
                status, chunked = _head(f, route)
                if status != 200:
                    raw = dechunk(f.read()) if chunked else f.read()
                    raise HostRefused(status, _json_or_text(raw))
                pending = b""
                for piece in _chunks(f) if chunked else iter(lambda: f.read1(1 << 16), b""):
                    pending += piece
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        if line.strip():
                            yield json.loads(line)
                if pending.strip():  # a last line without its newline
                    yield json.loads(pending)
    except (OSError, ValueError) as exc:
        raise HostUnreachable(f"the workspace host did not answer {route}: {exc}") from exc


class HostRefused(Exception):
    """A status other than 200; `answer` is its JSON body (`{"error", "field"}`)."""

    def __init__(self, status: int, answer: Any) -> None:
        super().__init__(status)
        self.status = status
        self.answer = answer


def _head(f: IO[bytes], route: str) -> tuple[int, bool]:
    status_line = f.readline().decode("latin-1")
    chunked = False
    while (line := f.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    try:
        return int(status_line.split()[1]), chunked
    except (IndexError, ValueError):
        raise HostUnreachable(f"the workspace host's answer to {route} is not HTTP") from None


def _chunks(f: IO[bytes]) -> Iterator[bytes]:
    while True:
        size = int(f.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return
        yield f.read(size)
        f.readline()  # the chunk's CRLF


def _json_or_text(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw.strip() else None
    except ValueError:
        return {"error": raw.decode("utf-8", "replace").strip(), "field": None}


def call(path: str, route: str, body: dict[str, Any], timeout: float | None = 30.0) -> HostAnswer:
    """POST `body` as JSON to `route`; `timeout` bounds the answer (None: a call that lasts
    as long as its work, e.g. waiting for a verdict)."""
    from ..reach.plain_client import HostGone, PlainHost

    try:
        answer = PlainHost(0, path).ask("POST", route, body, timeout=timeout)
    except HostGone as exc:
        raise HostUnreachable(f"the workspace host did not answer {route}: {exc}") from exc
    return answer.status, _json_or_text(answer.text.encode())
