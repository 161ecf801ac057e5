"""Every JSON-RPC request with an id gets an answer over stdio, even one the SDK's reader
would drop: the server is a real process, the client writes raw lines."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from gauntlet_lines import BAD_LINES  # bench/gauntlet/, shared with the gauntlet's fuzz

from agent_habitat.mcp_tools.stdio import screen
from agent_habitat.reach import stop_host

pytestmark = pytest.mark.anyio

HABITAT = str(Path(sys.executable).with_name("habitat"))


@pytest.mark.parametrize(("line", "request_id", "code"), BAD_LINES)
def test_the_screen_answers_what_the_sdk_would_drop(line: str, request_id: Any, code: int) -> None:
    verdict = screen(line)
    assert not verdict.forward
    assert verdict.reply is not None
    answer = json.loads(verdict.reply)
    assert answer["id"] == request_id
    assert answer["error"]["code"] == code


def test_the_screen_passes_good_lines_and_drops_bad_notifications() -> None:
    assert screen('{"jsonrpc":"2.0","id":1,"method":"ping"}').forward
    assert screen('{"jsonrpc":"2.0","method":"notifications/initialized"}').forward
    assert screen('{"jsonrpc":"2.0","id":1,"result":{}}').forward
    dropped = screen('{"jsonrpc":"1.0","method":"notifications/initialized"}')
    assert (dropped.forward, dropped.reply) == (False, None)
    blank = screen("   \n")
    assert (blank.forward, blank.reply) == (False, None)


class _Wire:
    def __init__(self, process: Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)

    async def send(self, line: str) -> None:
        await self.stdin.send(line.encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        line = await self.stdout.receive_until(b"\n", 1 << 24)
        message: dict[str, Any] = json.loads(line)
        return message


@pytest.mark.e2e
@pytest.mark.parametrize("entry", [["mcp", "--embedded"], ["mcp"]], ids=["embedded", "bridged"])
async def test_a_real_stdio_server_answers_every_request_with_an_id(
    tmp_path: Path, entry: list[str]
) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    non_object = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "shell_scene", "arguments": [1, 2]},
    }
    async with await anyio.open_process(
        [HABITAT, *entry], cwd=root, env=dict(os.environ)
    ) as process:
        wire = _Wire(process)
        try:
            # A hang guard, not a speed claim: the answers wait for a fresh interpreter to
            # import the server, and the first tool call for the habitat to be built (bridged:
            # for a host to start), which took over 30 s at load 28 with 4 workers.
            with anyio.fail_after(150):
                await wire.send(json.dumps(init))
                assert (await wire.receive())["id"] == 0
                await wire.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
                answers: dict[str, dict[str, Any]] = {}  # by the JSON of the id: 1.5, true
                for line, _, _ in BAD_LINES:
                    await wire.send(line)
                await wire.send(json.dumps(non_object))
                await wire.send('{"jsonrpc":"2.0","id":99,"method":"ping"}')
                # Every request with an id gets its answer; over the bridge they may come in
                # any order (a ping can overtake a tool call), so wait for each of them.
                expected = {json.dumps(rid) for _, rid, _ in BAD_LINES if rid is not None}
                expected |= {"7", "99"}
                while not expected <= answers.keys():
                    message = await wire.receive()
                    answers.setdefault(json.dumps(message.get("id")), message)
        finally:
            process.terminate()
            stop_host(root)  # the bridged entry started one
    for _, request_id, code in BAD_LINES:
        if request_id is not None:
            assert answers[json.dumps(request_id)]["error"]["code"] == code
    assert json.dumps(None) in answers  # the batch and the parse error: id null
    assert "`arguments` must be an object" in json.dumps(answers["7"])
    assert answers["99"]["result"] == {}
