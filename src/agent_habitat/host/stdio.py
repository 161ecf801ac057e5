"""The bridge on real stdin/stdout: one JSON-RPC message per line each way."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from agent_habitat.errors import HabitatError
from agent_habitat.mcp_tools.stdio import screen

from .bridge import Bridge, Endpoint, Message
from .launcher import ensure_host

__all__ = ["serve_bridge"]

_PARSE_ERROR = -32700


async def serve_bridge(root: Path) -> None:
    """Bridge this process's stdio to the host of workspace `root` (started if needed).

    Leaves the process (os._exit) when done: the line reader is a worker thread blocked
    in `read`, which only the client's next line or EOF would wake.
    """
    stdin = anyio.wrap_file(sys.stdin.buffer)
    stdout = anyio.wrap_file(sys.stdout.buffer)
    writing = anyio.Lock()

    async def connect() -> Endpoint:
        handle = await anyio.to_thread.run_sync(ensure_host, root)
        return Endpoint(socket=handle.record.socket)

    async def send(msg: Message) -> None:
        await write_line(json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode())

    async def write_line(body: bytes) -> None:
        line = body + b"\n"
        async with writing:
            await stdout.write(line)
            await stdout.flush()

    async def messages() -> AsyncIterator[Message]:
        async for line in stdin:
            # What the host's SDK would refuse (or this relay could not even encode: a lone
            # surrogate) is answered here, with the request's id.
            verdict = screen(line.decode("utf-8", "replace"))
            if not verdict.forward:
                if verdict.reply is not None:
                    await write_line(verdict.reply.encode())
                continue
            try:
                msg = json.loads(line)
            except json.JSONDecodeError as exc:
                error = {"code": _PARSE_ERROR, "message": f"not JSON: {exc}"}
                await send({"jsonrpc": "2.0", "id": None, "error": error})
                continue
            if not isinstance(msg, dict):
                error = {"code": _PARSE_ERROR, "message": "JSON-RPC batches are not supported"}
                await send({"jsonrpc": "2.0", "id": None, "error": error})
                continue
            yield msg

    code = 0
    try:
        async with anyio.create_task_group() as tg:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
                    async for _ in signals:
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(stop_on_signal)
            await Bridge(connect, send).run(messages())
            tg.cancel_scope.cancel()
    except* HabitatError as group:
        # The host could not be started (or restarted): bad configuration, unsafe
        # permissions. Raised inside task groups, hence the group.
        for exc in group.exceptions:
            print(f"habitat mcp: {exc}", file=sys.stderr)
        code = 2
    sys.stderr.flush()
    os._exit(code)
