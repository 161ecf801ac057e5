"""The host's JSON API over its unix socket, with the standard library alone.

A CLI call that a running host answers should cost a process start and a round trip, not
the second of imports that `reach.client` (httpx, the pydantic models) brings. The socket
needs no token (only the user can open it, mode 0600), so one HTTP/1.1 request with
`Connection: close` and a JSON body is the whole protocol: `PlainHost.ask` sends it and
returns the status and the decoded JSON answer. Nothing here knows a verb; the callers
(`cli.host_verbs`, `cli.host_scene`, and any command that wants a quick answer from the host)
decide what to send and what an answer means.

`live_host` finds the host: the socket its `host.lock` names while a live process holds
that lock (the kernel drops the lock when the host dies, so a stale record reads as none).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["HostAnswer", "HostGone", "PlainHost", "StateNotSafe", "dechunk", "host_of", "live_host"]

CONNECT_SECONDS = 10.0
"""A bound for connecting to a host that holds its lock but does not accept (hung)."""


class HostGone(OSError):
    """The host could not be reached, or went away before it answered."""

    def __init__(self, message: str, *, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent
        """True when the request may have reached the host (it may have acted on it)."""


# Plain classes, not dataclasses: `dataclasses` imports `inspect`, a tenth of this path.
class HostAnswer:
    """An answer: its HTTP status, its JSON body decoded (None when the body is empty or
    not JSON) and the body as text (for a message when it is not the JSON expected)."""

    __slots__ = ("data", "status", "text")

    def __init__(self, status: int, data: Any, text: str) -> None:
        self.status = status
        self.data = data
        self.text = text


class PlainHost:
    """The live host of a workspace: its pid and socket, from `host.lock`."""

    __slots__ = ("path", "pid")

    def __init__(self, pid: int, path: str) -> None:
        self.pid = pid
        self.path = path
        """The socket's path."""

    def ask(
        self, method: str, target: str, body: Any = None, *, timeout: float | None = None
    ) -> HostAnswer:
        """One request; `timeout` bounds the whole answer (None: as long as the host takes,
        for a foreground run). HostGone when the host cannot be reached or hangs up."""
        payload = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {target} HTTP/1.1\r\nHost: localhost\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
            "Connection: close\r\n\r\n"
        ).encode()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.settimeout(CONNECT_SECONDS if timeout is None else timeout)
            try:
                conn.connect(self.path)
            except OSError as exc:
                raise HostGone(f"cannot connect to {self.path}: {exc}", sent=False) from exc
            conn.settimeout(timeout)
            try:
                conn.sendall(head + payload)
                return _read_answer(conn)
            except OSError as exc:
                raise HostGone(str(exc) or type(exc).__name__, sent=True) from exc
        finally:
            conn.close()


def _read_answer(conn: socket.socket) -> HostAnswer:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(1 << 16)
        if not chunk:
            raise ConnectionResetError("the host closed the connection before it answered")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if sep:
            fields[name.strip().lower()] = value.strip()
    try:
        status = int(status_line.split()[1])
    except (IndexError, ValueError) as exc:
        raise ConnectionResetError(f"not an HTTP answer: {status_line!r}") from exc
    length = fields.get("content-length")
    chunks = [rest]
    got = len(rest)
    while length is None or got < int(length):
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    body = b"".join(chunks)
    if "chunked" in fields.get("transfer-encoding", ""):
        body = dechunk(body)
    text = body.decode("utf-8", "replace")
    try:
        decoded = json.loads(text) if text.strip() else None
    except ValueError:
        decoded = None
    return HostAnswer(status, decoded, text)


def dechunk(body: bytes) -> bytes:
    """A chunked HTTP/1.1 body, joined."""
    out = []
    while body:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out.append(body[:size])
        body = body[size + 2 :]
    return b"".join(out)


def live_host(lock: Path) -> PlainHost | None:
    """The host that holds `lock` and has published its record, or None (no host runs, or
    it is still starting)."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # held: a host runs
        else:
            return None  # nobody holds it: whatever the file says, no host runs
        record = json.loads(os.pread(fd, 1 << 16, 0) or b"null")
    except ValueError:
        return None  # still being written: a starting host
    finally:
        os.close(fd)
    if not isinstance(record, dict):
        return None
    path, pid = record.get("socket"), record.get("pid")
    if not isinstance(path, str) or not isinstance(pid, int):
        return None
    return PlainHost(pid, path)


class StateNotSafe(Exception):
    """The workspace's state folder (or its lock) is one another user may write: a lock
    there could name their socket. The full path refuses such a folder and says why."""


def host_of(root: Path) -> PlainHost | None:
    """The live host of the workspace at `root`, or None; StateNotSafe when the state
    folder may not be trusted to name it (every client of the host asks through this)."""
    from ..errors import HabitatError
    from ..workspace import Workspace, habitat_home, refuse_unsafe
    from .files import HostFiles

    files = HostFiles(Workspace.for_project(root))
    try:
        for path in (habitat_home(), files.state_dir, files.lock):
            if path.exists():
                refuse_unsafe(path)
    except (OSError, HabitatError) as exc:
        raise StateNotSafe(str(exc)) from exc
    return live_host(files.lock)
