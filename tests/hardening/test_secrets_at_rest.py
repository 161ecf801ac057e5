"""State is private (folders 0700, files 0600) and holds no secret of the environment: a
tab keeps only what it changed, and secret-looking values show as `***` in results and events."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest

from agent_habitat.secrets import is_secret_name, redact_data
from agent_habitat.shell.environment import apply_delta, env_delta
from agent_habitat.workspace import write_private
from mcp_tools.helpers import make_project, primary_client, text

pytestmark = pytest.mark.anyio

TOKEN = "ghp_s3cr3tV4lu3FromTheServerEnv"
AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.fixture(autouse=True)
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS)


def _dump(result: types.CallToolResult) -> str:
    return text(result) + json.dumps(result.structured_content)


def _everything_under(root: Path) -> list[Path]:
    return [root, *root.rglob("*")]


async def test_state_is_private_and_holds_no_secret_of_the_environment(
    tmp_path: Path, habitat_home: Path
) -> None:
    root = make_project(tmp_path / "p")
    (root / "sub").mkdir()
    results: list[types.CallToolResult] = []
    async with primary_client(root) as (primary, client):
        for command in ["export FOO=bar; unset LANG_UNSET_ME; cd sub", "echo $FOO; pwd"]:
            results.append(await client.call_tool("shell_run", {"command": command}))
        results.append(
            await client.call_tool("shell_run", {"command": "sleep 0.2", "background": True})
        )
        results.append(await client.call_tool("shell_wait", {"timeout_seconds": 10}))
        results.append(await client.call_tool("shell_scene", {}))
        results.append(await client.call_tool("shell_history", {}))
        events = primary.habitat.journal.since(0)
        tab = primary.habitat.shell.store.tab("main")
        stored = primary.habitat.db.query("SELECT env_json FROM tabs WHERE name = 'main'")
    body = results[1].structured_content
    assert body is not None
    assert body["output"] == "bar\n" + str(root / "sub") + "\n", body
    assert tab is not None
    assert tab.env is not None
    assert tab.env["GITHUB_TOKEN"] == TOKEN  # still carried, from the base environment
    delta = json.loads(stored[0]["env_json"])
    assert delta["set"] == {"FOO": "bar"}
    assert "PATH" not in json.dumps(delta)

    for path in _everything_under(habitat_home):
        mode = stat.S_IMODE(path.stat().st_mode)
        expected = 0o700 if path.is_dir() else 0o600
        assert mode == expected, f"{path} is {oct(mode)}"
        if path.is_file():
            body = path.read_bytes()
            assert TOKEN.encode() not in body, path
            assert AWS.encode() not in body, path
    for result in results:
        assert not result.is_error, text(result)
        assert TOKEN not in _dump(result)
    assert events
    assert TOKEN not in json.dumps([e.model_dump(mode="json") for e in events])


@pytest.mark.finding("inline-secrets")
async def test_a_secret_printed_by_a_command_shows_as_stars(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (primary, client):
        run = await client.call_tool(
            "shell_run", {"command": "printenv GITHUB_TOKEN; echo $AWS_SECRET_ACCESS_KEY"}
        )
        last = await client.call_tool("shell_last", {"grep": "."})
        assigned = await client.call_tool(
            "shell_run", {"command": "API_TOKEN=abcdefgh12345 true", "tab": "other"}
        )
        events = primary.habitat.journal.since(0)
    assert structured(run)["output"] == "***\n***\n"
    assert structured(last)["output"] == "***\n***\n"
    for result in (run, last):
        assert TOKEN not in _dump(result)
        assert AWS not in _dump(result)
    assert not assigned.is_error
    commands = [e.data.get("command") for e in events if e.kind == "shell.run.started"]
    assert "API_TOKEN=*** true" in commands
    assert "abcdefgh12345" not in json.dumps([e.data for e in events])


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("GITHUB_TOKEN", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("OPENAI_API_KEY", True),
        ("db_password", True),
        ("PATH", False),
        ("KEYBOARD", False),
        ("HOME", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_a_delta_gives_back_the_environment_it_was_taken_from() -> None:
    base = {"A": "1", "B": "2", "C": "3"}
    env = {"A": "1", "B": "changed", "D": "new"}
    delta = env_delta(env, base)
    assert delta == {"set": {"B": "changed", "D": "new"}, "unset": ["C"]}
    assert apply_delta(delta, base) == env


def test_event_data_is_redacted_deeply() -> None:
    data = {"a": [f"x {TOKEN} y", {"b": "PASSWORD='hunter2 long' z"}], "n": 3}
    assert redact_data(data) == {"a": ["x *** y", {"b": "PASSWORD=*** z"}], "n": 3}
    assert os.environ["GITHUB_TOKEN"] == TOKEN


def test_state_files_are_written_private_and_whole(tmp_path: Path) -> None:
    # warm.json, the test-dependency store, the lint baselines, the import-graph cache and
    # the dmypy owner file are written this way (warm.json was 0644: the long gauntlet).
    path = tmp_path / "state" / "cache" / "warm.json"
    write_private(path, '{"a": 1}')
    write_private(path, b'{"a": 2}')
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": 2}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["warm.json"]  # no temp file left
