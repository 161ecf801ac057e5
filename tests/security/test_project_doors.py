"""One check, every door: the MCP client's roots and `--project` refuse what `project_open`
refuses (`project_folder.a_project`).

Issue 23 ("Low"): `project_open` refused `/` and plain folders, but a client listing `/` or
a home folder as its root, or `habitat mcp --project /`, still made it the edit verbs' root.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import mcp.types as types
import pytest
from mcp.client.context import ClientRequestContext
from pydantic import FileUrl

from agent_habitat.errors import UsageError
from agent_habitat.events import InMemoryEventBus
from agent_habitat.project import Project
from mcp_tools.helpers import make_project, primary_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.finding("not-a-project")]

HABITAT = str(Path(sys.executable).with_name("habitat"))


def _roots(*folders: Path):  # type: ignore[no-untyped-def]
    async def roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(f.as_uri())) for f in folders])

    return roots


async def test_client_roots_that_are_no_project_open_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    plain = tmp_path / "plain"
    plain.mkdir()
    roots = _roots(Path("/"), home, plain)
    async with primary_client(None, cwd=plain, list_roots_callback=roots) as (primary, client):
        await client.call_tool("shell_scene", {})  # after the roots exchange
        assert primary.project.root is None
        listed = await client.list_tools()
    assert "file_write" not in {tool.name for tool in listed.tools}  # no root to write under


async def test_the_first_client_root_that_is_a_project_opens(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    project = make_project(tmp_path / "project")
    roots = _roots(Path("/"), plain, project)
    async with primary_client(None, cwd=plain, list_roots_callback=roots) as (primary, client):
        await client.call_tool("shell_scene", {})
        assert (primary.project.root, primary.project.source) == (project, "roots")


def test_a_project_flag_of_the_root_or_the_home_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(UsageError, match=r"--project / is the file system's root"):
        Project.at_start(InMemoryEventBus("w"), Path("/"), None)
    with pytest.raises(UsageError, match=r"is your home folder, not a project"):
        Project.at_start(InMemoryEventBus("w"), home, None)
    plain = tmp_path / "plain"
    plain.mkdir()  # a plain folder the user named is taken as asked
    assert Project.at_start(InMemoryEventBus("w"), plain, None).root == plain.resolve()


@pytest.mark.parametrize(
    "argv",
    [["mcp"], ["mcp", "--embedded"], ["run"], ["verify"], ["host", "start"]],
    ids=["mcp", "mcp-embedded", "run", "verify", "host-start"],
)
def test_every_command_refuses_the_home_folder_as_project(tmp_path: Path, argv: list[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "HABITAT_HOME": str(tmp_path / "state")}
    extra = ["echo hi"] if argv == ["run"] else []
    done = subprocess.run(
        [HABITAT, *argv, "--project", str(home), *extra],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "is your home folder, not a project" in done.stderr
    assert not (tmp_path / "state").exists() or not any((tmp_path / "state").rglob("*.lock"))
