"""`stdio.sock`: where a `habitat mcp` bridge hands the host its client's stdin and stdout.

The door (`reach/handoff.py` says the exchange): a unix socket made 0600 in the
owner-only state folder, and each connection's peer checked to be this user (`SO_PEERCRED`;
on a platform without it there is no door, and bridges relay). A connection brings a hello
with its descriptors attached (stdin, stdout, the bridge's urgent socket, both ends of its
outbox, `stdio_outbox.py`, and of its inbox, `stdio_intake.py`) and the client's bytes no
host has taken yet; the host answers `OK` and serves the session on them
(`stdio_session.py`, which imports the MCP SDK: not on the way to the host's start), or
`REFUSED` with the reason. A session counts as a client for idle exit, and `/api/status`
counts them (`stdio_sessions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from agent_habitat.reach import handoff as wire

if TYPE_CHECKING:
    from .app import HostApp, Hosted

__all__ = ["Hello", "serve_handoffs", "stdio_listener"]

logger = logging.getLogger(__name__)

HELLO_SECONDS = 10.0
"""A peer that connects and says nothing is let go after this long."""


def stdio_listener(path: Path) -> socket.socket | None:
    """The door, created 0600 (no window in which others could connect); None where no
    peer's uid can be checked."""
    if not (hasattr(socket, "SO_PEERCRED") and hasattr(socket, "recv_fds")):
        return None
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # only the lock holder gets here: a dead host's
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(32)
    sock.setblocking(False)
    return sock


class Hello:
    """What a bridge brought: the client's stdin and stdout, the bridge's urgent socket,
    both ends of its outbox and of its inbox, its hello, the client's bytes no host has
    taken."""

    def __init__(self, fds: list[int], fields: dict[str, Any], prefix: bytes) -> None:
        self.fds = fds
        self.fields = fields
        self.prefix = prefix

    def close_fds(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []


async def serve_handoffs(listener: socket.socket, hosted: Hosted, app: HostApp, root: Path) -> None:
    """Take bridges' sessions until cancelled (the host stops: each session ends, and its
    bridge goes on as it does when a host goes away)."""
    loop = asyncio.get_running_loop()
    app.info["stdio_sessions"] = 0
    try:
        async with anyio.create_task_group() as sessions:
            while True:
                conn, _ = await loop.sock_accept(listener)
                sessions.start_soon(_session, conn, hosted, app, root)
    finally:
        listener.close()


async def _session(conn: socket.socket, hosted: Hosted, app: HostApp, root: Path) -> None:
    hello: Hello | None = None
    try:
        if wire.peer_uid(conn) != os.getuid():
            return  # not the owner: not a word
        with anyio.fail_after(HELLO_SECONDS):
            hello = await _hello(conn)
        if (why := _refusal(hello)) is not None:
            await asyncio.get_running_loop().sock_sendall(conn, wire.frame(wire.REFUSED, why))
            return
        from .stdio_session import serve_session  # the MCP SDK: the host has it by now

        server = await hosted.mcp.server()
        app.activity.open += 1
        app.info["stdio_sessions"] += 1
        try:
            await serve_session(conn, hello, server, root)
        finally:
            app.info["stdio_sessions"] -= 1
            app.activity.open -= 1
            app.activity.touch()
    except (OSError, ValueError, TimeoutError) as exc:
        logger.warning("a bridge's stdio session ended early: %s", exc)
    except Exception:  # one session's failure is not the door's
        logger.exception("a bridge's stdio session failed")
    finally:
        if hello is not None:
            hello.close_fds()
        conn.close()  # closed already when a session's transport took it: a no-op


async def _hello(conn: socket.socket) -> Hello:
    """The hello frame (descriptors attached) and the prefix frame after it."""
    loop = asyncio.get_running_loop()
    buf = bytearray()
    fds: list[int] = []
    frames: list[tuple[bytes, bytes]] = []
    try:
        while len(frames) < 2:
            if len(buf) >= wire.HEADER.size:
                kind, size = wire.HEADER.unpack_from(buf)
                if size > wire.MAX_FRAME:
                    raise ValueError("a frame longer than any hello")
                if len(buf) >= wire.HEADER.size + size:
                    frames.append((kind, bytes(buf[wire.HEADER.size : wire.HEADER.size + size])))
                    del buf[: wire.HEADER.size + size]
                    continue
            await _readable(loop, conn)
            try:
                data, got, _, _ = socket.recv_fds(conn, 256 * 1024, 7)
            except BlockingIOError:
                continue
            fds += got
            for fd in got:
                os.set_inheritable(fd, False)  # no child of the host holds the client's stdio
            if not data:
                raise ValueError("the bridge hung up during its hello")
            buf += data
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    (hello_kind, hello), (prefix_kind, prefix) = frames
    fields = json.loads(hello) if hello_kind == wire.HELLO else {}
    if prefix_kind != wire.PREFIX or not isinstance(fields, dict):
        fields = {}
    return Hello(fds, fields, prefix)


async def _readable(loop: asyncio.AbstractEventLoop, conn: socket.socket) -> None:
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(conn.fileno(), wake)
    try:
        await ready
    finally:
        loop.remove_reader(conn.fileno())


def _refusal(hello: Hello) -> bytes | None:
    version = hello.fields.get("version")
    if version != wire.VERSION:
        return f"a bridge of exchange version {version}; this host speaks {wire.VERSION}".encode()
    if len(hello.fds) != 7:
        return b"the hello did not carry stdin, stdout, the urgent socket, the outbox and the inbox"
    from .stdio_intake import can_tee  # ctypes: not on the way to the host's start

    if not can_tee():
        return b"this platform cannot copy a pipe without taking from it (tee)"
    for fd in hello.fds:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return b"stdin and stdout must be pipes or sockets"
    if not stat.S_ISSOCK(os.fstat(hello.fds[2]).st_mode):
        return b"the urgent end must be a socket"
    if not all(stat.S_ISFIFO(os.fstat(fd).st_mode) for fd in hello.fds[3:]):
        return b"the outbox and the inbox must be pipes"
    if not isinstance(hello.fields.get("cwd"), str):
        return b"the hello did not name the client's cwd"
    return None
