"""The bridge on real stdin/stdout: lines in, lines out, relayed as they are.

The bridge neither validates nor re-encodes what it relays: the host screens the client's
lines as the embedded server screens stdin, and its lines are already what stdout wants.
Pipes and sockets (what MCP clients give a server) are read and written without blocking,
on the event loop: a worker thread per line cost more than the rest of the relay. Anything
else (a terminal, a file) falls back to a thread per read or write, abandoned when the
bridge leaves, so a terminal's shared file status is never changed.
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from agent_habitat.errors import HabitatError

from .bridge import Bridge
from .launcher import ensure_host, wait_gone
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
    """The client's lines from fd 0, the bridge's lines to fd 1."""

    def __init__(self, fd_in: int = 0, fd_out: int = 1) -> None:
        self._in = fd_in
        self._out = fd_out
        self._in_polled = _pollable(fd_in)
        self._out_polled = _pollable(fd_out)
        if self._in_polled:
            os.set_blocking(fd_in, False)
        if self._out_polled:
            os.set_blocking(fd_out, False)
        self._writing = anyio.Lock()
        self._thread_writing = threading.Lock()  # an abandoned write may go on

    async def _read(self) -> bytes:
        if not self._in_polled:
            return await anyio.to_thread.run_sync(
                os.read, self._in, _READ_BYTES, abandon_on_cancel=True
            )
        while True:
            try:
                return os.read(self._in, _READ_BYTES)
            except BlockingIOError:
                await anyio.wait_readable(self._in)

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
        async with self._writing:
            if not self._out_polled:
                await anyio.to_thread.run_sync(self._write_all, line, abandon_on_cancel=True)
                return
            view = memoryview(line)
            while view:
                try:
                    view = view[os.write(self._out, view) :]
                except BlockingIOError:
                    await anyio.wait_writable(self._out)


async def serve_bridge(root: Path) -> None:
    """Bridge this process's stdio to the host of workspace `root` (started if needed).

    Leaves the process (os._exit) when done: a read, a write or a host start may still be
    under way in a worker thread it abandoned.
    """

    async def connect(where: Path) -> Link:
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
