"""The bridge on real stdin/stdout: one JSON-RPC message per line each way."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from agent_habitat.errors import HabitatError
from agent_habitat.mcp_tools.stdio import screen

from .bridge import Bridge, Endpoint, Message
from .launcher import ensure_host

__all__ = ["serve_bridge"]

_PARSE_ERROR = -32700


class _Stdio:
    """Lines from stdin, lines to stdout, each in a worker thread the caller may abandon:
    a read waits for the client's next line, a write for a client that stopped reading,
    and neither may keep the bridge from leaving."""

    def __init__(self) -> None:
        self._writing = threading.Lock()  # a thread lock: an abandoned write may go on

    def _write(self, line: bytes) -> None:
        with self._writing:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    async def write_line(self, body: bytes) -> None:
        await anyio.to_thread.run_sync(self._write, body + b"\n", abandon_on_cancel=True)

    async def send(self, msg: Message) -> None:
        await self.write_line(json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode())

    async def _lines(self) -> AsyncIterator[bytes]:
        read = sys.stdin.buffer.readline
        while line := await anyio.to_thread.run_sync(read, abandon_on_cancel=True):
            yield line

    async def messages(self) -> AsyncIterator[Message]:
        """The client's messages until EOF; what cannot be relayed is answered here."""
        async for line in self._lines():
            # What the host's SDK would refuse (or this relay could not even encode: a lone
            # surrogate) is answered here, with the request's id.
            verdict = screen(line.decode("utf-8", "replace"))
            if not verdict.forward:
                if verdict.reply is not None:
                    await self.write_line(verdict.reply.encode())
                continue
            try:
                msg = json.loads(line)
            except json.JSONDecodeError as exc:
                await self._refuse(f"not JSON: {exc}")
                continue
            if not isinstance(msg, dict):
                await self._refuse("JSON-RPC batches are not supported")
                continue
            yield msg

    async def _refuse(self, why: str) -> None:
        error = {"code": _PARSE_ERROR, "message": why}
        await self.send({"jsonrpc": "2.0", "id": None, "error": error})


async def serve_bridge(root: Path) -> None:
    """Bridge this process's stdio to the host of workspace `root` (started if needed).

    Leaves the process (os._exit) when done: a line read, a write to stdout or a host
    start may still be under way in a worker thread it abandoned.
    """

    async def connect() -> Endpoint:
        # Abandoned when the client leaves meanwhile: starting a host may take seconds.
        handle = await anyio.to_thread.run_sync(ensure_host, root, abandon_on_cancel=True)
        return Endpoint(socket=handle.record.socket)

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
            await Bridge(connect, stdio.send).run(stdio.messages())
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
