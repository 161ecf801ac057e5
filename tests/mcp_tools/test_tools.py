"""Every shell tool over real JSON-RPC (in-memory streams, 2025 handshake)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from agent_habitat.testing import FakeSpawner, Script, eventually
from shell_waits import await_file

from .helpers import fake_primary_client, make_project, primary_client, text

pytestmark = pytest.mark.anyio

SHELL_TOOLS = {
    "shell_scene",
    "shell_run",
    "shell_history",
    "shell_rerun",
    "shell_last",
    "shell_which",
    "shell_kill",
    "shell_close",
    "shell_wait",
    "shell_input",
}


async def test_the_tools_are_the_shell_verbs_and_project_open_with_model_schemas(
    tmp_path: Path,
) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        listed = (await client.list_tools()).tools
    by_name = {tool.name: tool for tool in listed}
    assert set(by_name) == SHELL_TOOLS | {
        "project_open",
        "project_scene",
        "project_trust",
        "file_write",
        "file_edit",
        "verify_run",
        "verify_status",
        "verify_cancel",
    }
    run = by_name["shell_run"]
    assert run.input_schema["properties"]["command"]["minLength"] == 1
    assert run.input_schema["additionalProperties"] is False
    assert run.output_schema is not None
    assert "exit_code" in run.output_schema["properties"]
    assert all(tool.description and len(tool.description) > 60 for tool in listed)
    # `shell_rerun` says its arguments are as `shell_run`'s: those it shares lose only
    # their description; its own (`index`) keeps it.
    rerun = by_name["shell_rerun"]
    assert "as shell_run" in (rerun.description or "")
    assert rerun.output_schema == {"type": "object", "description": "As shell_run's result."}
    again = rerun.input_schema["properties"]
    assert again["timeout_seconds"] == {
        k: v for k, v in run.input_schema["properties"]["timeout_seconds"].items()
        if k != "description"
    }  # fmt: skip
    assert "description" in again["index"]


async def test_run_returns_state_and_exit_code_first_then_output(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    played = FakeSpawner({"echo hi; exit 3": Script(output="hi\n", exit_code=3)})
    async with fake_primary_client(project, played) as (_, client):
        result = await client.call_tool("shell_run", {"command": "echo hi; exit 3"})
    assert not result.is_error
    assert text(result) == "exited 3\n"
    assert "hi" not in text(result), "the body travels once, in the structured content"
    data = result.structured_content
    assert data is not None
    assert (data["state"], data["exit_code"], data["output"]) == ("exited", 3, "hi\n")
    assert "cwd" not in data, "it started in the project root, the default"


async def test_scene_history_last_which_rerun_describe_the_same_runs(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        await client.call_tool("shell_run", {"command": "echo one", "tab": "t1"})
        await client.call_tool("shell_run", {"command": "printf 'a\\nb\\nc\\n'", "tab": "t1"})
        scene = await client.call_tool("shell_scene", {})
        history = await client.call_tool("shell_history", {"tab": "t1"})
        last = await client.call_tool("shell_last", {"tab": "t1", "tail_lines": 1})
        which = await client.call_tool("shell_which", {"tab": "t1"})
        rerun = await client.call_tool("shell_rerun", {"tab": "t1", "index": 1})
    assert scene.structured_content is not None
    [tab] = scene.structured_content["tabs"]
    assert (tab["name"], tab["last_run"]["index"]) == ("t1", 2)
    assert "t1 idle" in text(scene)
    assert history.structured_content is not None
    assert [r["command"] for r in history.structured_content["rows"]] == [
        "echo one",
        "printf 'a\\nb\\nc\\n'",
    ]
    assert last.structured_content is not None
    assert last.structured_content["output"].strip() == "c"
    assert which.structured_content is not None
    assert which.structured_content["state"] == "idle"
    assert rerun.structured_content is not None
    assert (rerun.structured_content["index"], rerun.structured_content["output"]) == (3, "one\n")


async def test_background_run_then_wait_until_match_then_kill_then_close(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        started = await client.call_tool(
            "shell_run",
            {"command": "echo ready; sleep 30", "tab": "bg", "background": True},
        )
        waited = await client.call_tool(
            "shell_wait", {"tab": "bg", "until": "ready", "timeout_seconds": 10}
        )
        killed = await client.call_tool("shell_kill", {"tab": "bg"})
        closed = await client.call_tool("shell_close", {"tab": "bg"})
    assert started.structured_content is not None
    assert started.structured_content["state"] == "running"
    assert text(started) == f"running pid {started.structured_content['pid']}\n"
    assert waited.structured_content is not None
    assert waited.structured_content["reason"] == "matched"
    assert killed.structured_content is not None
    assert killed.structured_content["killed"] is True
    assert "remaining" not in killed.structured_content, "absent: no process is left alive"
    assert closed.structured_content is not None
    assert "open_tabs" not in closed.structured_content, "absent: no tab is open"


async def test_input_reaches_an_interactive_command(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        await client.call_tool(
            "shell_run",
            {
                "command": "read line; echo got:$line",
                "tab": "i",
                "interactive": True,
                "background": True,
            },
        )
        sent = await client.call_tool("shell_input", {"tab": "i", "text": "hello\n", "eof": True})
        waited = await client.call_tool("shell_wait", {"tab": "i", "timeout_seconds": 10})
        last = await client.call_tool("shell_last", {"tab": "i"})
    assert sent.structured_content is not None
    assert sent.structured_content["bytes_written"] == 6
    assert waited.structured_content is not None
    assert waited.structured_content["reason"] in {"exited", "not_running"}
    assert last.structured_content is not None
    assert last.structured_content["output"] == "got:hello\n"


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"command": "true", "timeout_seconds": 0}, "argument `timeout_seconds`"),
        ({"command": "true", "tab": "no spaces"}, "argument `tab`"),
        ({"command": "true", "colour": "red"}, "unknown argument `colour`"),
        ({}, "missing required argument `command`"),
    ],
)
async def test_bad_arguments_are_a_tool_error_naming_the_argument(
    tmp_path: Path, arguments: dict[str, object], named: str
) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        result = await client.call_tool("shell_run", arguments)
    assert result.is_error
    assert text(result).startswith("shell_run: invalid arguments:")
    assert named in text(result)


async def test_a_refusal_of_the_habitat_is_a_tool_error_not_a_crash(tmp_path: Path) -> None:
    played = FakeSpawner({"sleep 30": Script(keep_running=True)}, default=Script())
    async with fake_primary_client(make_project(tmp_path / "p"), played) as (_, client):
        missing = await client.call_tool("shell_kill", {"tab": "nope"})
        await client.call_tool(
            "shell_run", {"command": "sleep 30", "tab": "busy", "background": True}
        )
        busy = await client.call_tool("shell_run", {"command": "true", "tab": "busy"})
        bad_regex = await client.call_tool("shell_wait", {"tab": "busy", "until": "("})
        await client.call_tool("shell_kill", {"tab": "busy", "signal": "KILL"})
        still_serving = await client.call_tool("shell_run", {"command": "echo ok"})
    assert missing.is_error
    assert "no tab 'nope'" in text(missing)
    assert busy.is_error
    assert "busy" in text(busy)
    assert "sleep 30" in text(busy)
    assert bad_regex.is_error
    assert "regex" in text(bad_regex)
    assert not still_serving.is_error


async def test_the_ninth_tab_is_refused_naming_the_tool_that_closes_one(tmp_path: Path) -> None:
    played = FakeSpawner({}, default=Script())
    async with fake_primary_client(make_project(tmp_path / "p"), played) as (_, client):
        for n in range(8):
            assert not (
                await client.call_tool("shell_run", {"command": "true", "tab": f"t{n}"})
            ).is_error
        refused = await client.call_tool("shell_run", {"command": "true", "tab": "t8"})
    assert refused.is_error
    open_tabs = ", ".join(f"t{n}" for n in range(8))
    assert text(refused) == (
        f"shell_run: tab limit reached (8 open: {open_tabs}); "
        "close one with `shell_close` or reuse an open tab"
    )


async def test_an_unknown_tool_is_a_protocol_error(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        with pytest.raises(MCPError, match="unknown tool 'shell_nope'"):
            await client.call_tool("shell_nope", {})


async def test_two_foreground_runs_on_two_tabs_run_at_the_same_time(tmp_path: Path) -> None:
    # Each run goes on only once the other has started: run one after the other, the
    # first would give up waiting (exit 3) and the second would never be asked to wait.
    started = {tab: tmp_path / f"{tab}.started" for tab in ("a", "b")}
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        results: dict[str, dict[str, Any]] = {}

        async def run(tab: str, other: str) -> None:
            command = f"touch {started[tab]}; {await_file(started[other])}; echo met"
            result = await client.call_tool("shell_run", {"command": command, "tab": tab})
            assert result.structured_content is not None
            results[tab] = result.structured_content

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "a", "b")
            tg.start_soon(run, "b", "a")
    assert {tab: (r["exit_code"], r["output"]) for tab, r in results.items()} == {
        "a": (0, "met\n"),
        "b": (0, "met\n"),
    }


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_cancelling_a_foreground_run_kills_it_and_history_says_cancelled(
    tmp_path: Path, mode: str
) -> None:
    async with primary_client(make_project(tmp_path / "p"), mode=mode) as (primary, client):
        started = anyio.Event()
        primary.habitat.bus.subscribe(
            lambda event: started.set() if event.kind == "shell.run.started" else None
        )
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                await client.call_tool("shell_run", {"command": "sleep 30", "tab": "c"})

            tg.start_soon(call)
            with anyio.fail_after(30):
                await started.wait()
            tg.cancel_scope.cancel()

        async def last_state() -> str:
            history = await client.call_tool("shell_history", {"tab": "c"})
            assert history.structured_content is not None
            return str(history.structured_content["rows"][-1]["state"])

        # The kill finishes on the server after the cancelled request is gone.
        async def settled() -> bool:
            return await last_state() != "running"

        await eventually(settled)
        state = await last_state()
        scene = await client.call_tool("shell_scene", {})
    assert state == "cancelled"
    assert scene.structured_content is not None
    assert "pid" not in scene.structured_content["tabs"][0], "absent: nothing runs there"


async def test_cancelling_a_wait_stops_waiting_and_leaves_the_run_going(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        await client.call_tool("shell_run", {"command": "sleep 30", "tab": "w", "background": True})
        with anyio.move_on_after(0.5) as scope:
            await client.call_tool("shell_wait", {"tab": "w", "timeout_seconds": 60})
        which = await client.call_tool("shell_which", {"tab": "w"})
        await client.call_tool("shell_kill", {"tab": "w", "signal": "KILL"})
    assert scope.cancelled_caught
    assert which.structured_content is not None
    assert which.structured_content["state"] == "running"
