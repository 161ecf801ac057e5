"""What the agent reads, in bytes, from a real `habitat mcp` on stdio (issue 25): the tool
list, a red `verify_run`, the `status` prompt.

A client hands the model the whole tool list on every turn, so its size is a budget; the
budget covers whatever tools the server lists, so a new tool pays its way too.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client, StdioServerParameters

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.verify import stop_type_daemon

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HABITAT = str(Path(sys.executable).with_name("habitat"))
START_BOUND_S = 120  # a bound for a loaded 2-core machine to start the server, not a speed claim
TOOLS_LIST_BUDGET = 20_000
"""Bytes of the `tools/list` answer as it goes on the wire (57.5 KB before issue 25; 20,402
once `project_trust` joined, issue 23; 20,029 with a real project's path, which
`project_open`'s text names; 19,641 once a description that only says its property's name
and `shell_rerun`'s repeats of `shell_run`'s went, with a path of `PROJECT_PATH_CHARS`)."""
PROJECT_PATH_CHARS = 120
"""The open project's path the budget holds for: a person's clone, deep in their home
(`/home/alexandra.k/src/github.com/acme-platform/payments-reconciliation-service` is 79)."""


async def _raw_replies(argv: list[str], cwd: Path, requests: list[dict[str, Any]]) -> list[bytes]:
    """Each reply line the server wrote, raw, until every request with an id is answered."""
    initialize: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "budget-test", "version": "0"},
        },
    }
    lines: list[dict[str, Any]] = [
        initialize,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *requests,
    ]
    ids = {line["id"] for line in lines if "id" in line}
    process: Process = await anyio.open_process(argv, cwd=cwd, env=dict(os.environ))
    assert process.stdin is not None
    assert process.stdout is not None
    replies: dict[Any, bytes] = {}
    try:
        await process.stdin.send("".join(json.dumps(line) + "\n" for line in lines).encode())
        stream = BufferedByteReceiveStream(process.stdout)
        with anyio.fail_after(START_BOUND_S):
            while set(replies) != ids:
                raw = await stream.receive_until(b"\n", 1 << 24)
                message = json.loads(raw)
                if "id" in message:
                    replies[message["id"]] = raw
        await process.stdin.aclose()
        with anyio.fail_after(START_BOUND_S):
            await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return [replies[line["id"]] for line in requests]


def _long_project(tmp_path: Path) -> Path:
    """A project folder whose path is `PROJECT_PATH_CHARS` long where the temporary folder
    allows it (its last part padded), longer where it does not."""
    clone = tmp_path / "home/alexandra.k/src/github.com/acme-platform"
    name = "payments-reconciliation-service".ljust(PROJECT_PATH_CHARS - len(f"{clone}/"), "x")
    project = clone / name
    (project / ".git").mkdir(parents=True)
    return project


async def test_the_tool_list_of_a_project_server_fits_its_byte_budget(tmp_path: Path) -> None:
    project = _long_project(tmp_path)
    argv = [HABITAT, "mcp", "--embedded", "--project", str(project)]
    [raw] = await _raw_replies(argv, project, [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])
    tools = json.loads(raw)["result"]["tools"]
    names = {tool["name"] for tool in tools}
    assert {"shell_run", "file_edit", "verify_run", "verify_status"} <= names, names
    sizes = sorted(((len(json.dumps(t).encode()), t["name"]) for t in tools), reverse=True)
    # The budget is for a path of PROJECT_PATH_CHARS: a longer temporary folder's extra
    # characters, wherever the answer names the path, are not counted against it.
    path = json.dumps(str(project))[1:-1].encode()
    extra = raw.count(path) * max(0, len(path) - PROJECT_PATH_CHARS)
    assert raw.count(path) >= 1, "project_open's description names the open project"
    size = len(raw) - extra
    assert size <= TOOLS_LIST_BUDGET, f"{size} bytes for {len(tools)} tools: {sizes}"
    for tool in tools:
        assert tool["outputSchema"]["type"] == "object", tool["name"]  # the spec asks it
        for schema in (tool["inputSchema"], tool["outputSchema"]):
            assert _idle_keywords(schema) == [], tool["name"]


def _idle_keywords(node: Any) -> list[str]:
    """Titles (a string under `title`; a property may be called `title`) and null branches."""
    found: list[str] = []
    if isinstance(node, dict):
        if isinstance(node.get("title"), str):
            found.append(f"title {node['title']!r}")
        if node.get("type") == "null":
            found.append("a null branch")
        for value in node.values():
            found += _idle_keywords(value)
    elif isinstance(node, list):
        for item in node:
            found += _idle_keywords(item)
    return found


RED_VERIFY_BUDGET = 1_100
"""Structured content plus text of a red `verify_run` with one failing test (2,327 before;
the shell peers print pytest's own failure in 1,069)."""
STATUS_PROMPT_BUDGET = 2_048
FAILING_TEST = """\
from calc.arith import add


def test_add_is_wrong() -> None:
    total = add(2, 2)
    assert total == 5, "two and two"
"""


@pytest.fixture
async def red_calc(tmp_path: Path) -> AsyncIterator[Path]:
    root = build_sample(tmp_path / "calc")
    (root / "tests/test_wrong.py").write_text(FAILING_TEST, encoding="utf-8")
    yield root
    await stop_type_daemon(root)


async def test_a_red_verify_run_and_the_status_prompt_fit_their_budgets(red_calc: Path) -> None:
    env = {**os.environ, "HABITAT_COALESCE_SECONDS": "0"}
    params = StdioServerParameters(
        command=HABITAT, args=["mcp", "--embedded", "--project", str(red_calc)], env=env
    )
    async with Client(params, mode="legacy") as client:
        await client.call_tool("shell_run", {"command": "echo hi", "tab": "t"})
        red = await client.call_tool("verify_run", {"wait": True})
        prompt = await client.get_prompt("status")
    assert not red.is_error
    structured = red.structured_content
    assert structured is not None
    wire = json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    [block] = red.content
    assert isinstance(block, types.TextContent)
    size = len(wire.encode()) + len(block.text.encode())
    assert size <= RED_VERIFY_BUDGET, f"{size} bytes: {wire} + {block.text!r}"
    assert structured["state"] == "red"
    [failing] = [r for r in structured["result"]["rungs"] if "diagnostics" in r]
    [found] = failing["diagnostics"]
    assert (found["file"], found["line"]) == ("tests/test_wrong.py", 6)
    assert found["message"].startswith("tests/test_wrong.py::test_add_is_wrong")
    assert found["text"] == 'assert total == 5, "two and two"'
    said = prompt.model_dump_json(by_alias=True, exclude_none=True)
    assert len(said.encode()) <= STATUS_PROMPT_BUDGET, said
    text = prompt.messages[0].content
    assert isinstance(text, types.TextContent)
    assert "- t: idle; last #1 exited 0" in text.text
    assert "tests/test_wrong.py:6 AssertionError" in text.text
    assert '> assert total == 5, "two and two"' in text.text
    assert text.text.count("two and two") == 2, "the message and the assertion line, once each"
