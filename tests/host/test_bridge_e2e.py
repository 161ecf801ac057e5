"""`habitat mcp` as a bridge: an MCP client over stdio, the host behind it, and its death.

A test that only talks through a bridge to a running host shares the module's host
(`shared_project`); one that starts, kills or needs the state of a host has its own."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import IncomingMessage

from agent_habitat.reach import HostRecord, find_host
from agent_habitat.reach.bridge import HOST_RESTARTED
from agent_habitat.reach.launcher import host_files, probe_host
from agent_habitat.reach.lock import is_held
from agent_habitat.testing import eventually
from shell_waits import await_file

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HABITAT = str(Path(sys.executable).with_name("habitat"))


@asynccontextmanager
async def bridged(
    project: Path, inbox: list[Any] | None = None, mode: str = "legacy"
) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=HABITAT, args=["mcp", "--project", str(project)], env=dict(os.environ), cwd=project
    )

    async def on_message(message: IncomingMessage) -> None:
        if inbox is not None:
            inbox.append(message)

    async with Client(params, mode=mode, message_handler=on_message) as client:
        yield client


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def output(result: types.CallToolResult) -> str:
    assert not result.is_error, text(result)
    assert isinstance(result.structured_content, dict)
    out: str = result.structured_content["output"]
    return out


def host(project: Path) -> HostRecord:
    record = find_host(project)
    assert record is not None
    return record


async def kill_host(project: Path) -> int:
    pid = host(project).pid
    os.kill(pid, signal.SIGKILL)
    lock = host_files(project).lock

    # Dead means the kernel dropped its lock (and with it, its sockets).
    def dead() -> bool:
        if not is_held(lock):
            return True
        record = find_host(project)  # None while a new host starts
        return record is not None and record.pid != pid

    await eventually(dead, within=10)
    return pid


async def test_the_bridge_starts_the_host_and_relays_progress_and_list_changed(
    project: Path, tmp_path: Path
) -> None:
    # Inside the workspace: the host itself switches and says list_changed.
    other = project / "sub"
    other.mkdir()
    reported: list[float] = []
    inbox: list[Any] = []
    heard = tmp_path / "heard"

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)
        heard.touch()  # the slow run ends once a report has come through the bridge

    assert find_host(project) is None
    async with bridged(project, inbox) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        hi = await client.call_tool("shell_run", {"command": "echo hi"})
        # Not a 0.6 s sleep: a host kept off the cores for as long saw the run's end before
        # its first report was due, and sent none.
        slow = await client.call_tool(
            "shell_run",
            {"command": f"echo a; {await_file(heard)}; echo b"},
            progress_callback=on_progress,
        )
        await client.call_tool("project_open", {"path": str(other)})
        await eventually(
            lambda: any(isinstance(m, types.ToolListChangedNotification) for m in inbox)
        )
        assert find_host(project) is not None
    assert {"shell_run", "project_open"} <= tools
    assert output(hi) == "hi\n"
    assert output(slow) == "a\nb\n"
    assert reported
    assert reported == sorted(reported)


async def test_a_call_sent_after_the_host_died_is_answered_by_the_restarted_host(
    project: Path,
) -> None:
    async with bridged(project) as client:
        assert output(await client.call_tool("shell_run", {"command": "echo before"})) == (
            "before\n"
        )
        for round in range(2):
            dead = await kill_host(project)
            # Sent after the death (the kernel dropped the host's lock): it never reached
            # the old host, so it is no "outcome unknown" but an ordinary answer.
            after = await client.call_tool("shell_run", {"command": f"echo after {round}"})
            assert output(after) == f"after {round}\n"
            assert host(project).pid != dead
        # The session the bridge replayed is a real one: the tabs are the workspace's.
        scene = await client.call_tool("shell_scene", {})
    assert "main" in text(scene)


async def test_a_call_in_flight_when_the_host_dies_gets_a_tool_error(project: Path) -> None:
    async with bridged(project) as client:
        results: list[types.CallToolResult] = []

        async def long_call() -> None:
            results.append(await client.call_tool("shell_run", {"command": "sleep 30"}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(long_call)
            await eventually(lambda: _running(project), within=30)
            await kill_host(project)
        [in_flight] = results
        assert in_flight.is_error
        assert text(in_flight) == HOST_RESTARTED
        # The run outlived the host; the new host adopted it, and it can be killed.
        killed = await client.call_tool("shell_kill", {"tab": "main"})
        assert not killed.is_error, text(killed)
        after = await client.call_tool("shell_run", {"command": "echo next"})
    assert output(after) == "next\n"


async def _runs(project: Path) -> list[Any] | None:
    """The host's running runs, from its own status; None when no host answers.

    Not a second connection to its database: opening one (it migrates under a write lock)
    every poll starved the host's own writes on a loaded machine.
    """
    record = find_host(project)
    if record is None:
        return None
    status = await anyio.to_thread.run_sync(probe_host, record)
    return None if status is None else list(status["running"])


async def _running(project: Path) -> bool:
    return bool(await _runs(project))


async def _stopped(project: Path) -> bool:
    return await _runs(project) == []


async def test_the_bridge_says_why_it_cannot_start_the_host(project: Path) -> None:
    state = host_files(project).state_dir
    state.mkdir(parents=True)
    state.chmod(0o777)
    # stdin stays open, as a client's does: the bridge leaves on its own, saying why.
    async with await anyio.open_process([HABITAT, "mcp", "--project", str(project)]) as bridge:
        assert bridge.stderr is not None
        with anyio.fail_after(120):  # a bound for a stuck bridge; Python starts slowly here
            code = await bridge.wait()
            stderr = b"".join([chunk async for chunk in bridge.stderr])
    assert code == 2
    assert b"writable by group or others" in stderr
    assert find_host(project) is None


async def test_a_cancelled_call_stops_its_run_and_restarts_nothing(shared_project: Path) -> None:
    # The module's host: no test sharing it leaves a run running, which `_stopped` would see.
    async with bridged(shared_project) as client:
        await client.call_tool("shell_run", {"command": "echo warm"})
        pid = host(shared_project).pid
        async with anyio.create_task_group() as tg:
            scope = anyio.CancelScope()

            async def long_call() -> None:
                with scope:
                    await client.call_tool("shell_run", {"command": "sleep 30"})

            tg.start_soon(long_call)
            await eventually(lambda: _running(shared_project), within=30)
            scope.cancel()
        await eventually(lambda: _stopped(shared_project), within=30)
        after = await client.call_tool("shell_run", {"command": "echo next"})
        assert output(after) == "next\n"
        assert host(shared_project).pid == pid


async def test_a_2026_era_client_works_over_the_bridge(shared_project: Path) -> None:
    async with bridged(shared_project, mode="auto") as client:
        echo = await client.call_tool("shell_run", {"command": "echo modern"})
        tools = {t.name for t in (await client.list_tools()).tools}
    assert output(echo) == "modern\n"
    assert "shell_run" in tools


async def test_verify_status_through_the_bridge_names_the_host_that_serves_it(
    shared_project: Path,
) -> None:
    # The client talks to `habitat mcp`, its own child: "this process" would name the bridge,
    # while the verify runner, its warm daemons and its epochs live in the host.
    async with bridged(shared_project) as client:
        status = await client.call_tool("verify_status", {})
        assert not status.is_error, text(status)
        assert isinstance(status.structured_content, dict)
        served_by = status.structured_content["served_by"]
        pid = host(shared_project).pid
    assert (
        served_by
        == f"the workspace host (pid {pid}), reached through the stdio bridge of `habitat mcp`"
    )
