"""The escape server: terminal_* verbs on their own state, and terminal_host."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from .helpers import make_project, open_primary, open_terminal, text

pytestmark = pytest.mark.anyio


async def test_terminal_tabs_are_separate_from_the_primary_tabs(
    tmp_path: Path, habitat_home: Path
) -> None:
    project = make_project(tmp_path / "p")
    async with (
        open_primary(project, cwd=project) as primary,
        open_terminal(cwd=project) as terminal,
        Client(primary.server, mode="legacy") as shell,
        Client(terminal.server, mode="legacy") as escape,
    ):
        await shell.call_tool("shell_run", {"command": "echo primary", "tab": "p"})
        # Output over the cap, so the result points at the spool file holding all of it.
        ran = await escape.call_tool("terminal_run", {"command": "seq 1 20000", "tab": "t"})
        escape_scene = await escape.call_tool("terminal_scene", {})
        shell_scene = await shell.call_tool("shell_scene", {})
    assert ran.structured_content is not None
    assert Path(ran.structured_content["spool"]).is_relative_to(habitat_home / "terminal")
    assert escape_scene.structured_content is not None
    assert [t["name"] for t in escape_scene.structured_content["tabs"]] == ["t"]
    assert shell_scene.structured_content is not None
    assert [t["name"] for t in shell_scene.structured_content["tabs"]] == ["p"]


# With a host running, and restart, hung and dead: tests/host/test_terminal_host_e2e.py.
@pytest.mark.parametrize("action", ["status", "stop"])
async def test_terminal_host_with_no_host_running_says_so_and_does_nothing(
    tmp_path: Path, action: str
) -> None:
    project = make_project(tmp_path / "p")
    async with open_terminal(cwd=tmp_path) as terminal, Client(terminal.server, mode="legacy") as c:
        result = await c.call_tool("terminal_host", {"action": action, "workspace": "p"})
    assert not result.is_error
    data = result.structured_content
    assert data is not None
    assert "action" not in data, "the action asked for is not echoed"
    assert (data["workspace"], data["done"]) == (str(project), False)
    assert data["host_running"] is False
    assert text(result).startswith(f"done=false host_running=false pid=None action={action}")
    assert "no host" in text(result)


async def test_terminal_host_rejects_an_unknown_action_naming_it(tmp_path: Path) -> None:
    async with open_terminal(cwd=tmp_path) as terminal, Client(terminal.server, mode="legacy") as c:
        result = await c.call_tool("terminal_host", {"action": "reboot"})
    assert result.is_error
    assert "argument `action`" in text(result)


async def test_the_terminal_offers_no_prompts_or_resources_it_cannot_serve(tmp_path: Path) -> None:
    async with open_terminal(cwd=tmp_path) as terminal, Client(terminal.server, mode="legacy") as c:
        capabilities = c.server_capabilities
    assert capabilities.prompts is None
    assert capabilities.resources is None
    assert capabilities.tools is not None
