"""Human parity: the CLI goes through a running host, and works embedded when none runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_habitat.cli import main
from agent_habitat.reach import ensure_host

from .test_bridge_e2e import bridged, output

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`habitat ARGV` in-process (in a worker thread: the CLI runs its own event loop)."""
    code = await anyio.to_thread.run_sync(main, list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_the_cli_and_an_mcp_client_over_the_bridge_see_the_same_tabs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = str(project)
    async with bridged(project) as client:
        ran = await client.call_tool("shell_run", {"command": "echo from-agent", "tab": "agent"})
        assert output(ran) == "from-agent\n"
        code, out, _ = await cli(
            capsys, "run", "echo from-person", "--tab", "person", "--project", p, "--json"
        )
        assert code == 0
        assert json.loads(out)["output"] == "from-person\n"
        code, out, _ = await cli(capsys, "scene", "--project", p, "--json")
        assert code == 0
        assert sorted(t["name"] for t in json.loads(out)["tabs"]) == ["agent", "person"]
        scene = await client.call_tool("shell_scene", {})
        assert isinstance(scene.structured_content, dict)
        assert sorted(t["name"] for t in scene.structured_content["tabs"]) == ["agent", "person"]
        code, out, _ = await cli(capsys, "last", "agent", "--project", p, "--json")
        assert (code, json.loads(out)["output"]) == (0, "from-agent\n")


async def test_cli_input_reaches_an_interactive_run_started_over_mcp(
    shared_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = str(shared_project)
    async with bridged(shared_project) as client:
        started = await client.call_tool(
            "shell_run",
            {
                "command": "read line; echo got:$line",
                "tab": "repl",
                "interactive": True,
                "background": True,
            },
        )
        assert not started.is_error
        code, out, err = await cli(capsys, "input", "repl", "hello\n", "--project", p, "--json")
        assert code == 0, err
        assert json.loads(out)["bytes_written"] == len("hello\n")
        waited = await client.call_tool(
            "shell_wait", {"tab": "repl", "until": "got:hello", "timeout_seconds": 20}
        )
        assert isinstance(waited.structured_content, dict)
        assert waited.structured_content["reason"] in ("matched", "exited")
        assert "got:hello" in waited.structured_content["output"]


def _shape(text: str) -> Any:
    value = json.loads(text)
    return sorted(value) if isinstance(value, dict) else value


async def test_exit_codes_and_json_are_the_same_through_the_host_as_embedded(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = str(project)
    cases: list[tuple[str, ...]] = [
        ("run", "echo out; exit 3", "--tab", "x", "--json"),
        ("run", "sleep 5", "--tab", "y", "--timeout-seconds", "0.2", "--json"),
        ("last", "--tab", "nowhere", "--json"),
        ("run", "true", "--tab", "bad name", "--json"),
        ("history", "x", "--json"),
        ("which", "x", "--json"),
        ("wait", "x", "--timeout-seconds", "1", "--json"),  # nothing runs there: 1
    ]
    embedded = [await cli(capsys, *case, "--project", p) for case in cases]
    ensure_host(project)
    hosted = [await cli(capsys, *case, "--project", p) for case in cases]
    for case, (e_code, e_out, e_err), (h_code, h_out, h_err) in zip(
        cases, embedded, hosted, strict=True
    ):
        assert e_code == h_code, case
        # Never skipped on an empty side: each case says something, and both paths say it
        # on the same stream.
        assert e_out or e_err, case
        assert (bool(e_out), bool(e_err)) == (bool(h_out), bool(h_err)), case
        if e_out:
            assert _shape(e_out) == _shape(h_out), case
        if e_err:
            assert json.loads(e_err) == json.loads(h_err), case
    assert [code for code, _, _ in hosted] == [3, 124, 1, 2, 0, 0, 3]
    assert json.loads(hosted[0][1])["output"] == "out\n"


def test_a_foreground_run_through_the_host_streams_its_output_live(shared_project: Path) -> None:
    ensure_host(shared_project)  # the module's host, already running
    gate = shared_project / "go"
    command = f"echo started; while [ ! -e {gate} ]; do sleep 0.05; done; echo finished"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_habitat", "run", command, "--project", str(shared_project)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        # Blocks until the CLI copies the first line: only a live stream can deliver it,
        # since the command cannot finish before the gate exists.
        assert proc.stdout.readline() == b"started\n"
        gate.touch()
        rest, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rest == b"finished\n"
    assert proc.returncode == 0
    assert b"exit 0" in err
