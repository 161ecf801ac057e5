"""A secret typed inline (`GITHUB_TOKEN=… cmd`) shows as `***` wherever the habitat shows
it: the run's result and output, `last`, the history, the scene and its resource, errors,
the events, the CLI and the host's HTTP API (the dashboard's). `state.db` keeps the command
as typed, for a rerun, and is the user's alone (0600).

Issue 23 ("Low"): events redacted it, but the scene, the history, the run result and the
dashboard showed it in clear.
"""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path
from typing import Any

import httpx2
import pytest
from pydantic import BaseModel

from agent_habitat.reach import ensure_host, stop_host
from agent_habitat.workspace import Workspace
from mcp_tools.helpers import make_project, primary_client, text

from .browser_login import habitat_cli

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180), pytest.mark.finding("inline-secrets")]

SECRET = "ghp_TypedInline0123456789abcdef"
TYPED = f"GITHUB_TOKEN={SECRET} sh -c 'echo token is $GITHUB_TOKEN'"
SHOWN = "GITHUB_TOKEN=*** sh -c 'echo token is $GITHUB_TOKEN'"


def _dump(result: BaseModel) -> str:
    return json.dumps(result.model_dump(mode="json"))


async def test_every_mcp_answer_shows_a_typed_secret_as_stars(tmp_path: Path) -> None:
    other = "sk_live_0123456789QUOTEDvalue"
    async with primary_client(make_project(tmp_path / "p")) as (primary, client):
        run = await client.call_tool("shell_run", {"command": TYPED})
        answers = [
            run,
            await client.call_tool("shell_last", {}),
            await client.call_tool("shell_last", {"tail_lines": 5}),
            await client.call_tool("shell_history", {}),
            await client.call_tool("shell_scene", {}),
            await client.read_resource("habitat://scene"),
            # Typed once, it stays a secret: another tab's output shows it as stars too.
            await client.call_tool("shell_run", {"command": f"echo {SECRET}", "tab": "t2"}),
        ]
        background = {"command": f"export API_KEY='{other}'; sleep 30", "background": True}
        await client.call_tool("shell_run", {**background, "tab": "busy"})
        busy = await client.call_tool("shell_run", {"command": "true", "tab": "busy"})
        answers += [busy, await client.call_tool("shell_scene", {})]
        await client.call_tool("shell_close", {"tab": "busy"})
        events = json.dumps([e.model_dump(mode="json") for e in primary.habitat.journal.since(0)])
        db = primary.habitat.workspace.db_path
    body = run.structured_content
    assert body is not None
    assert body["output"] == "token is ***\n", body
    assert busy.is_error
    assert "API_KEY=***" in text(busy)
    for answer in answers:
        assert SECRET not in _dump(answer)
        assert other not in _dump(answer)
    assert SECRET not in events
    assert other not in events
    # At rest: the command as typed (a rerun runs it), in a file only its owner reads.
    with sqlite3.connect(db) as conn:
        stored = [row[0] for row in conn.execute("SELECT command FROM runs WHERE tab = 'main'")]
    assert stored == [TYPED]
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


def _cli_json(*argv: str) -> Any:
    code, out, err = habitat_cli(*argv, "--json")
    assert code == 0, err
    assert SECRET not in out + err
    return json.loads(out)


def test_the_cli_and_the_host_api_show_a_typed_secret_as_stars(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p")
    where = ("--project", str(root))
    try:
        # Without a host: the CLI's own habitat, and the scene's quick path over state.db.
        ran = _cli_json("run", *where, TYPED)
        assert (ran["command"], ran["output"]) == (SHOWN, "token is ***\n")
        assert _cli_json("history", *where)["rows"][0]["command"] == SHOWN
        assert _cli_json("scene", *where)["tabs"][0]["last_run"]["command"] == SHOWN
        code, out, err = habitat_cli("history", *where)
        assert code == 0, err
        assert SECRET not in out
        assert "GITHUB_TOKEN=***" in out
        # Through a host: the CLI, and the JSON API the dashboard reads.
        record = ensure_host(root).record
        assert _cli_json("last", *where)["command"] == SHOWN
        with httpx2.Client(
            transport=httpx2.HTTPTransport(uds=record.socket), base_url="http://localhost"
        ) as api:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("shell_scene", {}),
                ("shell_history", {}),
                ("shell_last", {}),
                ("shell_rerun", {}),
            ]
            for verb, body in calls:
                answer = api.post(f"/api/{verb}", json=body, timeout=60)
                assert answer.status_code == 200, answer.text
                assert SECRET not in answer.text, verb
                assert "GITHUB_TOKEN=***" in answer.text, verb
            tails = api.post("/api/dashboard/tails", json={"tabs": {"main": 0}}, timeout=60)
            assert tails.status_code == 200, tails.text
            assert SECRET not in tails.text
            assert "token is ***" in tails.text
    finally:
        stop_host(root)
    # The rerun ran the command as typed (the value reached the command), shown as stars.
    db = Workspace.for_project(root).db_path
    with sqlite3.connect(db) as conn:
        commands = [row[0] for row in conn.execute("SELECT command FROM runs ORDER BY idx")]
    assert commands == [TYPED, TYPED]
