"""`initialize` answered early over real stdio: one answer per request, the SDK's own answer
agreeing with it, and the session going on as usual."""

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

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HABITAT = str(Path(sys.executable).with_name("habitat"))
# A bound for a server process to start and answer, not a speed claim: importing the MCP
# SDK alone costs ~2 s of CPU, which on a 2-core machine at load 20 is over 45 s of wall.
START_BOUND_S = 120


def _initialize(version: str, **capabilities: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": {"name": "handshake-test", "version": "0"},
        },
    }


async def _session(argv: list[str], cwd: Path, first: dict[str, Any]) -> tuple[list[Any], str]:
    """Send `first`, `initialized` and `tools/list` at once, as a pipelining client does;
    every message the server wrote until the `tools/list` answer, and its stderr."""
    lines = [first, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines.append({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    wire = "".join(json.dumps(line) + "\n" for line in lines).encode()
    process: Process = await anyio.open_process(argv, cwd=cwd, env=dict(os.environ))
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    received: list[Any] = []
    try:
        await process.stdin.send(wire)
        replies = BufferedByteReceiveStream(process.stdout)
        with anyio.fail_after(START_BOUND_S):
            while not any(message.get("id") == 2 for message in received):
                received.append(json.loads(await replies.receive_until(b"\n", 1 << 24)))
        await process.stdin.aclose()
        with anyio.fail_after(START_BOUND_S):
            await process.wait()
        stderr = b""
        async for chunk in process.stderr:
            stderr += chunk
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return received, stderr.decode()


@pytest.mark.parametrize("version", ["2024-11-05", "1999-01-01"])
async def test_the_primary_server_answers_initialize_once_as_the_sdk_would(
    tmp_path: Path, version: str
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    argv = [HABITAT, "mcp", "--embedded", "--project", str(project)]
    received, stderr = await _session(argv, project, _initialize(version, roots={}))
    initialize, tools = received
    assert initialize["id"] == 1
    assert initialize["result"]["protocolVersion"] == (
        version if version != "1999-01-01" else "2025-11-25"
    )
    assert initialize["result"]["serverInfo"]["name"] == "agent-habitat"
    assert "shell_run" in {tool["name"] for tool in tools["result"]["tools"]}
    assert "differs from the SDK's" not in stderr


async def test_the_escape_server_answers_initialize_once_as_the_sdk_would(
    tmp_path: Path,
) -> None:
    received, stderr = await _session(
        [HABITAT, "terminal-mcp"], tmp_path, _initialize("2025-11-25")
    )
    initialize, tools = received
    assert initialize["result"]["serverInfo"]["name"] == "agent-habitat-terminal"
    assert "terminal_run" in {tool["name"] for tool in tools["result"]["tools"]}
    assert "differs from the SDK's" not in stderr


async def test_an_unusual_initialize_is_answered_by_the_sdk_alone(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    argv = [HABITAT, "mcp", "--embedded", "--project", str(project)]
    unusual = _initialize("2025-06-18", roots="all")
    received, _ = await _session(argv, project, unusual)
    assert [message.get("id") for message in received] == [1, 2]
    assert "error" in received[0], "the SDK refuses it; the early answer did not pretend"
