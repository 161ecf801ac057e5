"""Hostile input gets a clear error naming the field, never an internal error, and the
server keeps serving.

Issue 23 ("Low"): a NUL in a path (API and MCP), a lone surrogate in content or `command`,
a bad `signal`, a bad `cwd` and 100k-deep JSON on `/api` got internal errors or errors
that did not name the field.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agent_habitat.host.app import build_app, build_mcp
from mcp_tools.helpers import make_project, primary_client
from tool_results import data, text

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.finding("hostile-input")]

TOKEN = "test-token"
SURROGATE = "\ud800"

BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("file_write", {"path": "a\0b.txt", "content": "x\n"}, "path"),
    ("file_edit", {"path": "a\0b.txt", "edits": [{"old": "a", "new": "b"}]}, "path"),
    ("file_write", {"path": "a.txt", "content": f"x{SURROGATE}\n"}, "content"),
    ("file_edit", {"path": "a.txt", "edits": [{"old": SURROGATE, "new": "b"}]}, "edits.0.old"),
    ("file_edit", {"path": "a.txt", "edits": [{"old": "a", "new": SURROGATE}]}, "edits.0.new"),
    ("shell_run", {"command": f"echo {SURROGATE}"}, "command"),
    ("shell_run", {"command": "echo", "cwd": "no/such/folder"}, "cwd"),
    ("shell_run", {"command": "echo", "cwd": "loop"}, "cwd"),
    ("shell_kill", {"tab": "main", "signal": "NOPE"}, "signal"),
    ("shell_kill", {"tab": "main", "signal": 9999}, "signal"),
    ("shell_kill", {"tab": "main", "signal": -9}, "signal"),
    ("shell_kill", {"tab": "main", "signal": ""}, "signal"),
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = make_project(tmp_path / "project")
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    os.symlink("loop", root / "loop")  # a symlink to itself: resolving it never ends
    return root


@pytest.mark.parametrize(("tool", "arguments", "field"), BAD_CALLS)
async def test_hostile_mcp_calls_get_errors_naming_the_field(
    project: Path, tool: str, arguments: dict[str, Any], field: str
) -> None:
    async with primary_client(project) as (_, client):
        if tool == "shell_kill":
            await client.call_tool("shell_run", {"command": "echo seed"})
        result = await client.call_tool(tool, arguments)
        after = await client.call_tool("shell_run", {"command": "echo still serving"})
    message = text(result)
    assert result.is_error, message
    # As an argument the model refused, or as the service's refusal opening with the name.
    assert f"argument `{field}`" in message or message.startswith(f"{tool}: {field} "), message
    assert "internal error" not in message
    assert data(after)["output"] == "still serving\n"
    assert (project / "a.txt").read_text(encoding="utf-8") == "a\n"


@pytest.fixture
async def api(project: Path) -> AsyncIterator[httpx2.AsyncClient]:
    async with build_mcp(project) as hosted:
        app = build_app(hosted, token=TOKEN, idle_seconds=0)
        async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app.asgi),
            base_url="http://localhost:8765",
            headers={"authorization": f"Bearer {TOKEN}"},
            timeout=30,
        ) as client:
            yield client


API_BAD_BODIES: list[tuple[str, bytes, str | None, str]] = [
    ("file_write", b'{"path": "a\\u0000b", "content": "x"}', "path", "NUL"),
    ("file_write", b'{"path": "a.txt", "content": "\\ud800"}', "content", "lone surrogate"),
    ("shell_run", b'{"command": "echo \\ud800"}', "command", "unicode string"),
    ("shell_run", b'{"command": "echo", "cwd": "loop"}', None, "cwd 'loop'"),
    ("shell_run", b"[" * 100_000 + b"]" * 100_000, None, "nests too deeply"),
    ("shell_run", b'{"a": ' * 100_000 + b"1" + b"}" * 100_000, None, "nests too deeply"),
]


@pytest.mark.parametrize(("verb", "body", "field", "said"), API_BAD_BODIES)
async def test_hostile_api_bodies_get_a_4xx_naming_the_field(
    api: httpx2.AsyncClient, project: Path, verb: str, body: bytes, field: str | None, said: str
) -> None:
    response = await api.post(
        f"/api/{verb}", content=body, headers={"content-type": "application/json"}
    )
    assert 400 <= response.status_code < 500, response.text
    error = response.json()
    assert error["field"] == field
    assert said in error["error"]
    if field is not None:
        assert field in error["error"]
    still = await api.post("/api/shell_run", json={"command": "echo still serving"})
    assert still.status_code == 200
    assert still.json()["output"] == "still serving\n"
    assert (project / "a.txt").read_text(encoding="utf-8") == "a\n"
