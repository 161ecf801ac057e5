"""Both MCP servers over real stdio, as an MCP client launches them."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import psutil
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged

from agent_habitat.testing import eventually
from shell_waits import await_file
from tool_results import data, text

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HABITAT = str(Path(sys.executable).with_name("habitat"))
# A bound for a server process to start and answer or leave, not a speed claim: importing
# the MCP SDK alone costs ~2 s of CPU with coverage, which on a 2-core machine at load 40 is
# 40 s of wall (the bad-configuration test failed at 45 s so, in a loaded whole-suite run);
# test_mcp_handshake.py bounds the same start at 120 s.
START_BOUND_S = 120


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


def params(cwd: Path, *args: str) -> StdioServerParameters:
    # The SDK passes only a safe subset of the environment by default; the test's
    # HABITAT_HOME must reach the server.
    return StdioServerParameters(command=HABITAT, args=list(args), env=dict(os.environ), cwd=cwd)


@asynccontextmanager
async def stdio_client(cwd: Path, *args: str, mode: str = "legacy") -> AsyncIterator[Client]:
    async with Client(params(cwd, *args), mode=mode) as client:
        yield client


async def test_the_primary_server_runs_a_command_over_stdio(tmp_path: Path) -> None:
    root = project(tmp_path)
    reported: list[float] = []
    heard = tmp_path / "heard"

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)
        heard.touch()  # the slow run ends once a report has arrived

    async with stdio_client(root, "mcp", "--embedded") as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        echo = await client.call_tool("shell_run", {"command": "echo hi"})
        elsewhere = await client.call_tool("shell_run", {"command": "pwd", "tab": "t", "cwd": "/"})
        slow = await client.call_tool(
            "shell_run",
            {"command": f"echo a; {await_file(heard)}; echo b"},
            progress_callback=on_progress,
        )
    assert {"shell_run", "shell_scene", "project_open"} <= tools
    assert text(echo) == "exited 0\n"
    assert data(echo)["output"] == "hi\n"
    assert "cwd" not in data(echo), "it started in the project root, the default"
    assert data(elsewhere)["output"] == "/\n"
    assert not {"tab", "cwd", "command"} & set(data(elsewhere)), "the arguments are not echoed"
    assert data(slow)["output"] == "a\nb\n"
    assert reported
    assert reported == sorted(reported)


async def test_the_escape_server_has_terminal_verbs_on_its_own_state(
    tmp_path: Path, habitat_home: Path
) -> None:
    root = project(tmp_path)
    async with stdio_client(root, "terminal-mcp") as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        echo = await client.call_tool("terminal_run", {"command": "echo hi"})
        # Output over the cap: the result points at the spool file that holds all of it.
        big = await client.call_tool("terminal_run", {"command": "seq 1 20000"})
        host = await client.call_tool("terminal_host", {"action": "status"})
    assert tools == {
        "terminal_scene",
        "terminal_run",
        "terminal_history",
        "terminal_rerun",
        "terminal_last",
        "terminal_which",
        "terminal_kill",
        "terminal_close",
        "terminal_wait",
        "terminal_input",
        "terminal_host",
    }
    assert data(echo)["output"] == "hi\n"
    assert "spool" not in data(echo), "nothing was left out: no pointer to the rest"
    assert Path(data(big)["spool"]).is_relative_to(habitat_home / "terminal")
    assert (data(host)["done"], data(host)["host_running"]) == (False, False)
    assert "no host runs for this workspace" in text(host)


async def test_a_2026_client_is_served_over_stdio_with_list_changed(tmp_path: Path) -> None:
    root = project(tmp_path)
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)  # a project: project_open refuses a plain folder
    async with stdio_client(root, "mcp", "--embedded", mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        echo = await client.call_tool("shell_run", {"command": "echo modern"})
        async with client.listen(tools_list_changed=True) as subscription:
            await client.call_tool("project_open", {"path": str(other)})
            with anyio.fail_after(10):
                event = await subscription.__anext__()
    assert data(echo)["output"] == "modern\n"
    assert event == ToolsListChanged()


async def test_habitat_mcp_without_embedded_bridges_to_the_workspace_host(tmp_path: Path) -> None:
    from agent_habitat.reach import find_host, stop_host

    root = project(tmp_path)
    try:
        async with stdio_client(root, "mcp") as client:
            echo = await client.call_tool("shell_run", {"command": "echo hi"})
            host = find_host(root)
    finally:
        stop_host(root)
    assert data(echo)["output"] == "hi\n"
    assert host is not None  # the bridge started the host, which outlives the client


def server_processes() -> list[psutil.Process]:
    # Other children of this process (a spool keeper an in-process habitat started, say)
    # may be zombies or gone by the time they are looked at.
    found = []
    for child in psutil.Process().children():
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "mcp" in child.cmdline():
                found.append(child)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


async def test_a_background_run_outlives_a_killed_server_and_the_next_server_adopts_it(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    gate = tmp_path / "gate"
    command = f"while [ ! -e {gate} ]; do sleep 0.05; done; echo finished"
    async with stdio_client(root, "mcp", "--embedded") as client:
        started = await client.call_tool(
            "shell_run", {"command": command, "tab": "bg", "background": True}
        )
        [server] = server_processes()
        server.send_signal(signal.SIGKILL)
        server.wait(10)
        with pytest.raises(MCPError, match="Connection closed"):
            await client.call_tool("shell_scene", {})
    pid = data(started)["pid"]
    assert psutil.pid_exists(pid)

    async with stdio_client(root, "mcp", "--embedded") as client:
        before = data(await client.call_tool("shell_scene", {}))
        gate.touch()
        waited = data(await client.call_tool("shell_wait", {"tab": "bg", "timeout_seconds": 10}))
        after = data(await client.call_tool("shell_scene", {}))
        last = data(await client.call_tool("shell_last", {"tab": "bg"}))
    [tab] = before["tabs"]
    assert (tab["name"], tab["state"], tab["pid"]) == ("bg", "running", pid)
    assert waited["reason"] in {"exited", "not_running"}
    [tab] = after["tabs"]
    assert tab["state"] == "idle"
    assert (tab["last_run"]["state"], tab["last_run"]["exit_code"]) == ("exited", 0)
    assert last["output"] == "finished\n"


async def test_sigterm_stops_the_server_and_kills_its_foreground_run(tmp_path: Path) -> None:
    root = project(tmp_path)
    async with stdio_client(root, "mcp", "--embedded") as client:
        await client.call_tool("shell_run", {"command": "true", "tab": "fg"})
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                with pytest.raises(MCPError, match="Connection closed"):
                    await client.call_tool("shell_run", {"command": "sleep 30", "tab": "fg"})

            tg.start_soon(call)
            [server] = server_processes()
            await eventually(
                lambda: any("sleep" in p.name() for p in server.children(recursive=True))
            )
            sleeper = next(p for p in server.children(recursive=True) if "sleep" in p.name())
            server.send_signal(signal.SIGTERM)
            # The exit status goes to whoever reaps first (the SDK's transport may): psutil
            # then reports None. What matters is a prompt, clean exit.
            assert server.wait(10) in {0, None}
    assert not sleeper.is_running() or sleeper.status() == psutil.STATUS_ZOMBIE
    async with stdio_client(root, "mcp", "--embedded") as client:
        history = data(await client.call_tool("shell_history", {"tab": "fg"}))
    assert history["rows"][-1]["state"] == "cancelled"


async def test_a_missing_project_folder_is_refused_at_start(tmp_path: Path) -> None:
    with anyio.fail_after(START_BOUND_S):
        finished = await anyio.run_process(
            [HABITAT, "mcp", "--embedded", "--project", str(tmp_path / "nowhere")],
            input=b"",
            env=dict(os.environ),
            check=False,
        )
    assert finished.returncode == 2
    assert b"--project" in finished.stderr
    assert b"nowhere" in finished.stderr


async def test_bad_configuration_is_reported_at_start_without_waiting_for_stdin(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    (root / "pyproject.toml").write_text("[tool.habitat.shell]\nmax_tabs = 0\n", encoding="utf-8")
    async with await anyio.open_process(
        [HABITAT, "mcp", "--embedded", "--project", str(root)], env=dict(os.environ)
    ) as process:  # stdin stays open, as an MCP client keeps it
        with anyio.fail_after(START_BOUND_S):
            code = await process.wait()
        assert process.stderr is not None
        stderr = await process.stderr.receive()
    assert code == 2
    assert b"max_tabs" in stderr
