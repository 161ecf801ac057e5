"""Text renderings: what decides the next step first, and where the rest of the output is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import TextContent

from agent_habitat.config import ShellConfig
from agent_habitat.mcp_tools.render import brief, render
from agent_habitat.mcp_tools.wire import OUTPUT_WIRE_BYTES
from agent_habitat.shell import models as m
from agent_habitat.shell.models import Caps, KillResult, RunResult, SceneResult, TabScene

from .helpers import make_project, open_primary

pytestmark = pytest.mark.anyio


def run_result(**changes: object) -> RunResult:
    values: dict[str, object] = {
        "tab": "main",
        "index": 4,
        "command": "make",
        "pid": 99,
        "state": "exited",
        "exit_code": 2,
        "duration_s": 1.5,
        "cwd": "/p",
        "output": "head\n… [900 bytes omitted; full output in the spool] …\ntail\n",
        "omitted_bytes": 900,
        "output_bytes": 1000,
        "spool": "/state/spool/run-4/output",
        "cursor": 1000,
    }
    values.update(changes)
    return RunResult.model_validate(values)


def test_a_finished_run_reads_state_exit_code_then_output_then_where_the_rest_is() -> None:
    lines = render(run_result()).splitlines()
    assert lines[0] == "state=exited exit_code=2 tab=main #4 1.50s"
    assert lines[1] == "head"
    assert lines[-1] == "[900 of 1000 bytes omitted; spool /state/spool/run-4/output]"


def test_a_running_run_says_how_to_follow_it() -> None:
    text = render(run_result(state="running", exit_code=None, omitted_bytes=0, output=""))
    assert text.startswith("state=running tab=main #4 1.50s pid=99 (still running: wait or last")


def test_a_kill_that_left_processes_alive_says_so() -> None:
    result = KillResult(tab="t", index=1, killed=True, pids=[5, 6], signal="SIGTERM", remaining=[6])
    assert "STILL ALIVE: [6]" in render(result)


async def test_tool_descriptions_state_the_configured_caps(tmp_path: Path) -> None:
    config = ShellConfig(output_cap_bytes=4096, max_tabs=3)
    project = make_project(tmp_path / "p")
    async with (
        open_primary(project, cwd=project, config=config) as primary,
        Client(primary.server, mode="legacy") as client,
    ):
        tools = {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}
    assert "capped at 4 KiB" in tools["shell_run"]
    assert "at most 3 tabs" in tools["shell_run"]
    assert "Capped at 4 KiB" in tools["shell_last"]


def test_the_brief_text_is_the_outcome_and_where_the_rest_is_never_the_body() -> None:
    text = brief(run_result())
    assert text.splitlines() == [
        "exited 2",
        "[900 of 1000 bytes left out; shell_last tab=main index=4 grep/since]",
    ]
    assert "head" not in text
    assert "tail" not in text


def test_a_complete_output_adds_nothing_to_the_brief() -> None:
    result = run_result(output="a\nb\nc\n", omitted_bytes=0, output_bytes=6)
    assert brief(result) == "exited 2\n"


def test_a_huge_last_line_is_not_in_the_brief() -> None:
    result = run_result(output="x" * 5000 + "\n", omitted_bytes=0, output_bytes=5001)
    assert len(brief(result)) < 400


def test_a_running_run_briefs_its_pid() -> None:
    result = run_result(state="running", exit_code=None, omitted_bytes=0, output="")
    assert brief(result) == "running pid 99\n"


def test_a_kill_brief_names_a_signal_other_than_term_and_any_pid_left_alive() -> None:
    done = KillResult(tab="t", index=1, killed=True, pids=[5], signal="SIGTERM", remaining=[])
    alive = KillResult(tab="t", index=1, killed=True, pids=[5, 6], signal="SIGKILL", remaining=[6])
    none = KillResult(tab="t", index=None, killed=False, pids=[], signal="SIGTERM", remaining=[])
    assert brief(done) == "killed\n"
    assert brief(alive) == "killed SIGKILL STILL ALIVE: [6]\n"
    assert brief(none) == "nothing was running\n"


async def test_a_big_output_reaches_the_client_once_within_17_kib_with_its_last_line(
    tmp_path: Path,
) -> None:
    async with (
        open_primary(make_project(tmp_path / "p")) as primary,
        Client(primary.server, mode="legacy") as client,
    ):
        result = await client.call_tool("shell_run", {"command": "seq 1 36000"})
    data = result.structured_content
    assert data is not None
    assert data["output"].rstrip("\n").endswith("\n36000")
    assert data["output"].startswith("1\n2\n")
    assert data["output_bytes"] == len("".join(f"{i}\n" for i in range(1, 36001)))
    shown = data["output"].split("\n… [")
    head, tail = shown[0], shown[1].split("] …\n", 1)[1]
    assert data["omitted_bytes"] == data["output_bytes"] - len(head) - len(tail)
    assert len(json.dumps(data["output"], ensure_ascii=False).encode()) <= OUTPUT_WIRE_BYTES + 2
    block = result.content[0]
    assert isinstance(block, TextContent)
    assert "36000" not in block.text
    wire = len(block.text.encode()) + len(json.dumps(data, separators=(",", ":")).encode())
    assert wire <= 17 * 1024


def test_the_scene_brief_leaves_the_previews_to_the_structured_content() -> None:
    tab = TabScene(
        name="web",
        shell="bash",
        cwd="/p",
        state="idle",
        pid=None,
        last_run=None,
        preview="line one\nline two\n",
    )
    caps = Caps(max_tabs=8, history_rows=50, output_cap_bytes=16384, preview_bytes=2048)
    result = SceneResult(tabs=[tab], caps=caps)
    assert "line two" in render(result)
    assert brief(result) == "1/8 tabs: web idle\n"


def _waited(reason: str, state: str | None, match: str | None = None) -> m.WaitResult:
    return m.WaitResult.model_validate(
        {
            "tab": "web",
            "index": 2,
            "reason": reason,
            "match": match,
            "state": state,
            "exit_code": 0 if state == "exited" else None,
            "output": "",
            "cursor": 10,
        }
    )


def test_the_wait_brief_keeps_what_matched_apart_from_the_runs_state() -> None:
    assert brief(_waited("matched", "running", "ready on :80")) == (
        "matched 'ready on :80'; the run goes on\n"
    )
    assert brief(_waited("exited", "exited")) == "the run ended; run exited 0\n"
    assert brief(_waited("timeout", "running")) == "timed out waiting; the run goes on\n"
    assert "matched: running" not in brief(_waited("matched", "running", "running"))
