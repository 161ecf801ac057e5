"""The bridge on real stdin/stdout: lines in, lines out, relayed as they are.

The bridge neither validates nor re-encodes what it relays: the host screens the client's
lines as the embedded server screens stdin, and its lines are already what stdout wants.
Pipes and sockets (what MCP clients give a server) are read and written without blocking,
on the event loop: a worker thread per line cost more than the rest of the relay. Anything
else (a terminal, a file) falls back to a thread per read or write, abandoned when the
bridge leaves, so a terminal's shared file status (non-blocking) is never changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from agent_habitat.errors import HabitatError
from agent_habitat.workspace import Workspace

from .bridge import Bridge
from .files import HostFiles
from .link import Link, LinkClosed

__all__ = ["serve_bridge"]

_READ_BYTES = 256 * 1024
_CONNECT_ATTEMPTS = 3


def _pollable(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _Stdio:
    """The client's lines from fd 0, the bridge's lines to fd 1.

    Pipes and sockets ride asyncio's pipe transports (registered once, buffered, written
    at once when the pipe has room); anything else a worker thread per read or write.
    """

    def __init__(self, fd_in: int = 0, fd_out: int = 1) -> None:
        self._in = fd_in
        self._out = fd_out
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._writing = anyio.Lock()
        self._thread_writing = threading.Lock()  # an abandoned write may go on

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        if _pollable(self._in):
            self._reader = asyncio.StreamReader(limit=_READ_BYTES, loop=loop)
            protocol = asyncio.StreamReaderProtocol(self._reader, loop=loop)
            await loop.connect_read_pipe(
                lambda: protocol, os.fdopen(self._in, "rb", 0, closefd=False)
            )
        if _pollable(self._out):
            pipe = os.fdopen(self._out, "wb", 0, closefd=False)
            transport, flow = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
            self._writer = asyncio.StreamWriter(transport, flow, None, loop)

    async def _read(self) -> bytes:
        if self._reader is not None:
            return await self._reader.read(_READ_BYTES)
        return await anyio.to_thread.run_sync(
            os.read, self._in, _READ_BYTES, abandon_on_cancel=True
        )

    async def lines(self) -> AsyncIterator[bytes]:
        """The client's lines (newline kept) until EOF; blank lines skipped."""
        pending = b""
        while chunk := await self._read():
            pending += chunk
            if b"\n" not in chunk:
                continue
            *done, pending = pending.split(b"\n")
            for line in done:
                if line.strip():
                    yield line + b"\n"
        if pending.strip():
            yield pending + b"\n"

    def _write_all(self, data: bytes) -> None:
        with self._thread_writing:
            view = memoryview(data)
            while view:
                view = view[os.write(self._out, view) :]

    async def write(self, line: bytes) -> None:
        """One line, whole: writers never tear each other's lines."""
        if self._writer is not None:
            self._writer.write(line)  # whole, at once: no other writer can come between
            with contextlib.suppress(OSError):  # a client gone: its stdin's end stops us
                await self._writer.drain()
            return
        async with self._writing:
            await anyio.to_thread.run_sync(self._write_all, line, abandon_on_cancel=True)


async def serve_bridge(root: Path) -> None:
    """Bridge this process's stdio to the host of workspace `root` (started if needed).

    Leaves the process (os._exit) when done: a read, a write or a host start may still be
    under way in a worker thread it abandoned.
    """

    async def connect(where: Path) -> Link:
        files = HostFiles(Workspace.for_project(where))
        files.prepare()  # refuses a state folder others could plant a socket in
        with contextlib.suppress(LinkClosed):
            # A running host answers on its socket: that is all the bridge needs to know,
            # without reading the lock (its record model costs pydantic's import, a
            # good part of the time before the bridge can answer `initialize`).
            return await Link.open(str(files.socket))
        from .launcher import ensure_host, wait_gone  # to start one: seconds anyway

        for attempt in range(1, _CONNECT_ATTEMPTS + 1):
            # Abandoned when the client leaves meanwhile: starting a host may take seconds.
            handle = await anyio.to_thread.run_sync(ensure_host, where, abandon_on_cancel=True)
            try:
                return await Link.open(handle.record.socket)
            except LinkClosed:
                # A host on its way out (killed, stopping) still holds the lock for a
                # moment after its socket closed: wait for that, then start the next.
                if attempt == _CONNECT_ATTEMPTS:
                    raise
                pid = handle.record.pid
                await anyio.to_thread.run_sync(wait_gone, where, pid, abandon_on_cancel=True)
        raise AssertionError("unreachable")

    stdio = _Stdio()
    await stdio.open()
    code = 0
    try:
        async with anyio.create_task_group() as tg:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
                    async for _ in signals:
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(stop_on_signal)
            await Bridge(connect, root, stdio.write).run(stdio.lines())
            tg.cancel_scope.cancel()
    except* HabitatError as group:
        # The host could not be started (or restarted): bad configuration, unsafe
        # permissions. Raised inside (nested) task groups, hence the group.
        for exc in _leaves(group):
            print(f"habitat mcp: {exc}", file=sys.stderr)
        code = 2
    sys.stderr.flush()
    os._exit(code)


def _leaves(group: BaseExceptionGroup[HabitatError]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        found.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return found
