"""`project_open` of a folder outside the workspace moves a bridged session to that
workspace's host, over real stdio with the SDK's client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest

from agent_habitat.reach import find_host, stop_host
from agent_habitat.reach.launcher import probe_host
from agent_habitat.testing import eventually

from .test_bridge_e2e import bridged, host, kill_host, output, text

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture
def other(tmp_path: Path) -> Iterator[Path]:
    """A second project (a git work tree of its own), its host stopped afterwards."""
    root = tmp_path / "other"
    (root / ".git").mkdir(parents=True)
    yield root
    stop_host(root)


async def _status(root: Path) -> dict[str, Any]:
    status = await anyio.to_thread.run_sync(probe_host, host(root))
    assert status is not None
    return status


def _main_cwd(status: dict[str, Any]) -> str:
    [main] = [t for t in status["tabs"] if t["name"] == "main"]
    cwd: str = main["cwd"]
    return cwd


async def test_project_open_of_another_workspace_moves_the_session_to_its_host(
    project: Path, other: Path
) -> None:
    inbox: list[Any] = []
    async with bridged(project, inbox) as client:
        assert output(await client.call_tool("shell_run", {"command": "pwd"})) == f"{project}\n"
        first = host(project).pid
        assert find_host(other) is None
        # Relative to the client's cwd (the project), not to any host's.
        opened = await client.call_tool("project_open", {"path": "../other"})
        assert not opened.is_error, text(opened)
        assert find_host(other) is not None
        moved = await client.call_tool("shell_run", {"command": "pwd; echo moved"})
        assert output(moved) == f"{other}\nmoved\n"
        await eventually(
            lambda: any(isinstance(m, types.ToolListChangedNotification) for m in inbox)
        )
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "verify_run" in tools  # the new host has its project open
        # The session's tabs are the new workspace's now.
        new_status = await _status(other)
        assert _main_cwd(new_status) == str(other)
        assert new_status["root"] == str(other)
    # The old host never saw the `project_open`: it still runs, on its own project.
    assert host(project).pid == first
    old_status = await _status(project)
    assert _main_cwd(old_status) == str(project)


async def test_a_moved_session_restarts_the_new_workspaces_host(project: Path, other: Path) -> None:
    async with bridged(project) as client:
        opened = await client.call_tool("project_open", {"path": str(other)})
        assert not opened.is_error, text(opened)
        old = host(project).pid
        await kill_host(other)
        after = await client.call_tool("shell_run", {"command": "pwd"})
        assert output(after) == f"{other}\n"
        assert host(project).pid == old  # the host the session left is not the one restarted


async def test_project_open_inside_the_workspace_stays_on_its_host(project: Path) -> None:
    (project / "sub").mkdir()
    async with bridged(project) as client:
        await client.call_tool("shell_run", {"command": "true"})
        pid = host(project).pid
        opened = await client.call_tool("project_open", {"path": "sub"})
        assert not opened.is_error, text(opened)
        assert isinstance(opened.structured_content, dict)
        assert opened.structured_content["root"] == str(project / "sub")
        assert host(project).pid == pid
