"""The agent's verify loop over a real MCP client on stdio: `habitat mcp --embedded --project`
on the sample project (a git repository with a package and pytest tests)."""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPDeprecationWarning

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.testing import eventually
from agent_habitat.verify import stop_type_daemon
from tool_results import data, text

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HABITAT = str(Path(sys.executable).with_name("habitat"))
EPOCH_URI = "habitat://verify/epoch"
FAILING_TEST = """\
from calc.arith import add


def test_add_is_wrong() -> None:
    total = add(2, 2)
    assert total == 5, "two and two"
"""


@pytest.fixture
async def calc(tmp_path: Path) -> AsyncIterator[Path]:
    root = build_sample(tmp_path / "calc")
    text = root / "src/calc/text.py"  # a change to verify: a clean tree has nothing to verify
    text.write_text(text.read_text(encoding="utf-8") + "X = 1\n", encoding="utf-8")
    yield root
    await stop_type_daemon(root)


class Inbox:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def __call__(self, message: IncomingMessage) -> None:
        if not isinstance(message, Exception):
            self.messages.append(message)

    def updates(self, uri: str) -> int:
        return sum(
            1
            for m in self.messages
            if isinstance(m, types.ResourceUpdatedNotification) and str(m.params.uri) == uri
        )


@asynccontextmanager
async def verify_client(root: Path, **client: Any) -> AsyncIterator[Client]:
    # No coalesce window: each request starts at once (the window has its own tests).
    env = {**os.environ, "HABITAT_COALESCE_SECONDS": "0"}
    params = StdioServerParameters(
        command=HABITAT, args=["mcp", "--embedded", "--project", str(root)], env=env, cwd=root
    )
    client.setdefault("mode", "legacy")
    async with Client(params, **client) as connected:
        yield connected


async def test_verify_run_is_green_then_a_write_makes_status_stale_naming_the_file(
    calc: Path,
) -> None:
    async with verify_client(calc) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        ran = data(await client.call_tool("verify_run", {"policy": "minimal", "wait": True}))
        green = await client.call_tool("verify_status", {})
        await client.call_tool("shell_run", {"command": "echo 'Y = 2' >> src/calc/arith.py"})
        stale = await client.call_tool("verify_status", {})
    assert {"verify_run", "verify_status", "verify_cancel"} <= tools
    assert ran["state"] == "green", ran
    assert data(green)["green"] is True
    assert text(green).startswith("state=green green=true")
    after = data(stale)
    assert after["green"] is False
    assert after["stale"] is True
    assert after["changed"] == ["src/calc/arith.py"]
    assert after["epoch"]["state"] == "stale"
    first = text(stale).splitlines()[0]
    assert first.startswith("state=stale green=false")
    assert "src/calc/arith.py" in text(stale)


async def test_file_edit_after_green_makes_the_epoch_stale_at_once(calc: Path) -> None:
    inbox = Inbox()
    async with verify_client(calc, message_handler=inbox) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.session.subscribe_resource(EPOCH_URI)
        ran = data(await client.call_tool("verify_run", {"policy": "minimal", "wait": True}))
        assert ran["green"] is True, ran
        updates = inbox.updates(EPOCH_URI)
        edited = await client.call_tool(
            "file_edit",
            {"path": "src/calc/text.py", "edits": [{"old": "Text helpers", "new": "Helpers"}]},
        )
        assert not edited.is_error, text(edited)
        # The edit verb marks the epoch stale itself, before any watcher or status looks.
        await eventually(lambda: inbox.updates(EPOCH_URI) > updates)
        read = await client.read_resource(EPOCH_URI)
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    status = json.loads(content.text)
    assert status["green"] is False
    assert status["epoch"]["state"] == "stale"
    # The resource follows the wire rules: the epoch's changed paths are the status's.
    assert "src/calc/text.py" in status["changed"]
    assert "changed" not in status["epoch"]


async def test_a_red_result_of_a_failing_test_fits_in_1100_bytes_and_names_the_assertion(
    calc: Path,
) -> None:
    (calc / "tests/test_wrong.py").write_text(FAILING_TEST, encoding="utf-8")
    async with verify_client(calc) as client:
        red = await client.call_tool(
            "verify_run",
            {"rung": ["test.scoped"], "filter": ["tests/test_wrong.py"], "wait": True},
        )
        status = await client.call_tool("verify_status", {})
    result = data(red)
    assert result["state"] == "red", result
    assert text(red) == "red: test.scoped red\n", "a few words: the failure is structured"
    # What the model reads is the structured content: the finding, located, with its line.
    (rung,) = result["result"]["rungs"]
    (finding,) = rung["diagnostics"]
    assert (finding["file"], finding["line"]) == ("tests/test_wrong.py", 6)
    assert finding["message"].startswith("tests/test_wrong.py::test_add_is_wrong")
    assert finding["text"] == 'assert total == 5, "two and two"'
    assert rung["spool"]
    assert rung["state"] == "red"
    for answer, budget in ((red, 1100), (status, 4096)):
        wire = json.dumps(data(answer), separators=(",", ":"), ensure_ascii=False)
        assert len(text(answer).encode()) + len(wire.encode()) <= budget, wire


async def test_prompts_are_listed_and_return_text_and_the_epoch_resource_follows_runs(
    calc: Path,
) -> None:
    inbox = Inbox()
    async with verify_client(calc, message_handler=inbox) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.session.subscribe_resource(EPOCH_URI)
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        verified = await client.get_prompt("verify", {"policy": "minimal"})
        await eventually(lambda: inbox.updates(EPOCH_URI) >= 2)
        await client.call_tool("shell_scene", {})  # the session's first tool call
        status = await client.get_prompt("status")
        cancel = await client.get_prompt("cancel")
    assert prompts == ["verify", "cancel", "status", "project_trust"]
    said = verified.messages[0].content
    assert isinstance(said, types.TextContent)
    assert said.text.startswith("state=green green=true")
    told = status.messages[0].content
    assert isinstance(told, types.TextContent)
    assert "Verify:" in told.text
    assert "time (session mcp-1)" in told.text
    nothing = cancel.messages[0].content
    assert isinstance(nothing, types.TextContent)
    assert nothing.text.startswith("cancelled=false: nothing to cancel")


async def test_time_accounting_adds_up_per_session_and_a_waited_run_reports_progress(
    calc: Path,
) -> None:
    reported: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append((progress, message))

    async with verify_client(calc) as client:
        await client.call_tool("shell_run", {"command": "sleep 0.3"})
        await client.call_tool(
            "verify_run", {"policy": "minimal", "wait": True}, progress_callback=on_progress
        )
        status = data(await client.call_tool("verify_status", {}))
    assert reported
    values = [value for value, _ in reported]
    assert values == sorted(set(values))
    assert "rungs done" in (reported[0][1] or "")
    time = status["time"]
    session = time["session"]
    assert time["session_id"] == "mcp-1"
    assert session["calls"] == 3
    assert session["blocked_s"] >= 0.3
    assert session["active_s"] == pytest.approx(session["reasoning_s"] + session["blocked_s"])
    assert session["active_s"] <= session["wall_s"]
    assert session["environment_s"] > 0
    workspace = time["workspace"]
    assert workspace["active_s"] == pytest.approx(workspace["reasoning_s"] + workspace["blocked_s"])
    assert workspace["active_s"] <= workspace["wall_s"]


async def test_a_2026_era_client_is_one_session_across_its_calls(calc: Path) -> None:
    # The official client's default era sends no `initialize`: each request's session had no
    # client_params, so every call counted as a session of its own (mcp-4, 1 call, after 4).
    async with verify_client(calc, mode="auto") as client:
        for _ in range(3):
            await client.call_tool("shell_run", {"command": "true"})
        status = data(await client.call_tool("verify_status", {}))
    assert status["time"]["session_id"] == "mcp-1"
    assert status["time"]["session"]["calls"] == 4
