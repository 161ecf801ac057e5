"""The gauntlet's raw stdio client: a real `habitat mcp` process and JSON-RPC lines.

No SDK client on purpose: the server is killed under it, and a raw wire can tell an
answer, an error and silence apart without a session's own recovery getting in the way.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

HABITAT = str(Path(sys.executable).with_name("habitat"))
PROTOCOL = "2025-06-18"


async def poll_until(condition: Callable[[], bool], within: float) -> bool:
    """Whether `condition()` (a look at the OS's processes) came true within `within` s."""
    with anyio.move_on_after(within):
        while not condition():  # noqa: ASYNC110 - the process table sends no events
            await anyio.sleep(0.05)
        return True
    return False


class Unanswered(Exception):
    """A request with an id got no answer in time (the figure the gauntlet keeps at 0)."""


@dataclass
class Wire:
    process: Process
    stdout: BufferedByteReceiveStream
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1000))
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    async def start(cls, argv: list[str], cwd: Path, env: dict[str, str]) -> Wire:
        process = await anyio.open_process([HABITAT, *argv], cwd=cwd, env=env)
        assert process.stdout is not None
        wire = cls(process, BufferedByteReceiveStream(process.stdout))
        init = {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "gauntlet", "version": "0"},
        }
        await wire.request("initialize", init, within=180)
        await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        # `initialize` is answered while the server still imports the SDK and opens its
        # habitat (mcp_tools/handshake.py); an answered `tools/list` means it serves, so a
        # kill that follows lands among the runs it starts, not before it has any.
        await wire.request("tools/list", {}, within=180)
        return wire

    async def send(self, message: dict[str, Any] | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        assert self.process.stdin is not None
        await self.process.stdin.send(line.encode() + b"\n")

    async def answer(self, request_id: object) -> dict[str, Any]:
        """The answer to the request `request_id` (answers to others are kept for later)."""
        key = json.dumps(request_id)
        while key not in self.answers:
            line = await self.stdout.receive_until(b"\n", 1 << 26)
            message = json.loads(line)
            if isinstance(message, dict) and "id" in message and "method" not in message:
                self.answers[json.dumps(message["id"])] = message
        return self.answers.pop(key)

    async def request(self, method: str, params: dict[str, Any], within: float) -> dict[str, Any]:
        request_id = next(self.ids)
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            with anyio.fail_after(within):
                return await self.answer(request_id)
        except TimeoutError as exc:
            raise Unanswered(f"{method} unanswered after {within}s") from exc

    async def call(self, tool: str, arguments: dict[str, Any], within: float = 60) -> Any:
        """The tool's structured result; raises on a JSON-RPC error or a tool error."""
        answer = await self.request(
            "tools/call", {"name": tool, "arguments": arguments}, within=within
        )
        if "error" in answer:
            raise RuntimeError(f"{tool}: {answer['error']}")
        result = answer["result"]
        if result.get("isError"):
            raise RuntimeError(f"{tool}: {result.get('content')}")
        return result.get("structuredContent")

    def kill(self) -> None:
        """SIGKILL the server process (what a crash or the OOM killer does)."""
        if self.process.returncode is None:
            os.kill(self.process.pid, signal.SIGKILL)

    async def close(self) -> None:
        if self.process.returncode is None:
            self.process.terminate()
        with anyio.move_on_after(10):
            await self.process.wait()
        if self.process.returncode is None:
            self.kill()
            await self.process.wait()
        await self.process.aclose()
