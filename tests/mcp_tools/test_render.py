"""Text renderings: what decides the next step first, and where the rest of the output is."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.types import TextContent

from agent_habitat.config import ShellConfig
from agent_habitat.mcp_tools.render import brief, render
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


def test_the_brief_text_keeps_the_state_and_the_last_line_but_not_the_body() -> None:
    text = brief(run_result())
    lines = text.splitlines()
    assert lines[0] == "state=exited exit_code=2 tab=main #4 1.50s"
    assert lines[1] == "tail"
    assert "head" not in text
    assert lines[2] == (
        f"[{len(run_result().output.encode())} of 1000 bytes in structured `output`; "
        "rest: last tab=main index=4 grep/since]"
    )


def test_a_one_line_output_is_the_whole_brief() -> None:
    result = run_result(output="hi\n", omitted_bytes=0, output_bytes=3)
    assert brief(result) == "state=exited exit_code=2 tab=main #4 1.50s\nhi\n"


def test_a_huge_last_line_is_cut_in_the_brief() -> None:
    result = run_result(output="x" * 5000 + "\n", omitted_bytes=0, output_bytes=5001)
    assert len(brief(result)) < 400


def test_a_short_complete_output_is_counted_not_repeated() -> None:
    result = run_result(output="a\nb\nc\n", omitted_bytes=0, output_bytes=6)
    assert brief(result).splitlines()[1:] == ["c", "[3 lines in structured `output`]"]


def test_results_without_a_body_brief_as_they_render() -> None:
    result = KillResult(tab="t", index=1, killed=True, pids=[5], signal="SIGTERM", remaining=[])
    assert brief(result) == render(result)


async def test_a_big_output_reaches_the_client_once_in_the_structured_content(
    tmp_path: Path,
) -> None:
    async with (
        open_primary(make_project(tmp_path / "p")) as primary,
        Client(primary.server, mode="legacy") as client,
    ):
        result = await client.call_tool("shell_run", {"command": "seq 1 36000"})
    data = result.structured_content
    assert data is not None
    assert data["output"].rstrip("\n").endswith("36000")
    assert data["omitted_bytes"] > 0
    block = result.content[0]
    assert isinstance(block, TextContent)
    assert block.text.splitlines()[1] == "36000"
    assert "18000\n" not in block.text
    assert len(block.text) < 400


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
    assert (
        brief(result) == "1/8 tabs (output cap 16384 B, history 50 rows)\n- web: idle bash cwd=/p\n"
    )
