"""Bad values are validation errors naming the field, never an internal error; arguments are
strict (no bool↔int↔str coercion)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_habitat.cli import main
from mcp_tools.helpers import make_project, primary_client, text

pytestmark = pytest.mark.anyio

BIG = 1024 * 1024

BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("shell_last", {"index": 2**63}, "index"),
    ("shell_last", {"since": 2**64}, "since"),
    ("shell_rerun", {"index": 2**63}, "index"),
    ("shell_run", {"command": "echo a\0b"}, "command"),
    ("shell_run", {"command": "x" * BIG}, "command"),
    ("shell_run", {"command": "echo", "env": {"A": "x\0y"}}, "env"),
    ("shell_run", {"command": "echo", "env": {"A\0": "x"}}, "env"),
    ("shell_run", {"command": "echo", "env": {"A=B": "x"}}, "env"),
    ("shell_run", {"command": "echo", "env": {"": "x"}}, "env"),
    ("shell_run", {"command": "echo", "env": {f"V{i}": "x" for i in range(4097)}}, "env"),
    ("shell_run", {"command": "echo", "cwd": "/tmp\0/x"}, "cwd"),
    ("shell_run", {"command": "echo", "cwd": "a/" * (BIG // 2)}, "cwd"),
    ("shell_run", {"command": "echo", "shell": ""}, "shell"),
    ("shell_run", {"command": "echo", "background": "yes"}, "background"),
    ("shell_run", {"command": "echo", "background": 1}, "background"),
    ("shell_run", {"command": "echo", "timeout_seconds": "5"}, "timeout_seconds"),
    ("shell_run", {"command": "echo", "timeout_seconds": True}, "timeout_seconds"),
    ("shell_run", {"command": 5}, "command"),
    ("shell_kill", {"tab": "main", "signal": True}, "signal"),
    ("shell_history", {"limit": "5"}, "limit"),
    ("shell_input", {"tab": "main", "text": "a", "eof": "true"}, "eof"),
    ("shell_last", {"grep": "("}, "grep"),
    ("shell_wait", {"until": "[a-"}, "until"),
    ("project_open", {"path": "/tmp\0x"}, "path"),
    ("project_open", {"path": "p/" * (BIG // 2)}, "path"),
    ("verify_run", {"files": ["x" * 300]}, "files"),
    ("verify_run", {"files": ["a\0b"]}, "files"),
]


@pytest.mark.parametrize(("tool", "arguments", "field"), BAD_CALLS)
async def test_a_bad_value_is_a_tool_error_naming_the_field(
    tmp_path: Path, tool: str, arguments: dict[str, Any], field: str
) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        if tool in {"shell_last", "shell_wait", "shell_kill", "shell_input"}:
            await client.call_tool("shell_run", {"command": "echo seed"})
        result = await client.call_tool(tool, arguments)
    message = text(result)
    assert result.is_error, message
    assert f"`{field}" in message, message
    assert "internal error" not in message


async def test_json_compatible_values_still_fit(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        result = await client.call_tool(
            "shell_run", {"command": "echo ok", "timeout_seconds": 5, "env": {"A_B": "1"}}
        )
        # An explicit null is the default, not a value to measure (it was an internal error).
        unset = await client.call_tool("shell_run", {"command": "echo ok", "env": None})
        killed = await client.call_tool("shell_kill", {"tab": "main", "signal": 15})
    assert not result.is_error, text(result)
    assert not killed.is_error, text(killed)
    assert not unset.is_error, text(unset)


def test_the_cli_refuses_an_index_past_2_63_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["last", "--index", "9223372036854775808", "--project", str(tmp_path), "--json"]
    code = main(argv)
    error = json.loads(capsys.readouterr().err)
    assert code == 2
    assert error["field"] == "index"
