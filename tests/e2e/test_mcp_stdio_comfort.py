"""The edit verbs and project_scene through `habitat mcp` over real stdio, as a client sees them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tool_results import data, text

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HABITAT = str(Path(sys.executable).with_name("habitat"))
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=cwd, env=os.environ | GIT_ENV, check=True, capture_output=True
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("x = 1\nprint(x)\nx = 1\n", encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first commit")
    return root


@asynccontextmanager
async def server(repo: Path) -> AsyncIterator[Client]:
    env = os.environ | GIT_ENV  # HABITAT_HOME (set per test) must reach the server
    params = StdioServerParameters(
        command=HABITAT, args=["mcp", "--embedded", "--project", str(repo)], env=env, cwd=repo
    )
    async with Client(params, mode="legacy") as client:
        yield client


async def test_file_edit_refuses_missing_and_ambiguous_text_with_line_numbers(repo: Path) -> None:
    async with server(repo) as client:
        missing = await client.call_tool(
            "file_edit", {"path": "app.py", "edits": [{"old": "y = 2", "new": "y = 3"}]}
        )
        ambiguous = await client.call_tool(
            "file_edit", {"path": "app.py", "edits": [{"old": "x = 1", "new": "x = 2"}]}
        )
    assert missing.is_error
    assert "`old` not found" in text(missing)
    assert ambiguous.is_error
    assert "occurs 2 times, at lines 1, 3" in text(ambiguous)
    assert (repo / "app.py").read_text(encoding="utf-8") == "x = 1\nprint(x)\nx = 1\n"


async def test_file_write_outside_the_project_is_refused(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    (repo / "link").symlink_to(tmp_path)
    async with server(repo) as client:
        escaped = await client.call_tool("file_write", {"path": "../outside.txt", "content": "x"})
        linked = await client.call_tool("file_write", {"path": "link/outside.txt", "content": "x"})
    for result in (escaped, linked):
        assert result.is_error
        assert "outside" in text(result)
    assert not outside.exists()


async def test_a_successful_edit_changes_the_file_and_shows_in_project_scene(repo: Path) -> None:
    async with server(repo) as client:
        before = data(await client.call_tool("project_scene", {}))
        edited = data(
            await client.call_tool(
                "file_edit",
                {"path": "app.py", "edits": [{"old": "x = 1", "new": "x = 2", "anchor": "print"}]},
            )
        )
        after = data(await client.call_tool("project_scene", {}))
    assert (repo / "app.py").read_text(encoding="utf-8") == "x = 1\nprint(x)\nx = 2\n"
    assert edited["edits"] == 1
    assert "path" not in edited, "the path asked for is not echoed"
    assert (before["branch"], before["head"]["subject"]) == ("main", "first commit")
    assert "dirty" not in before, "absent: a clean tree has no dirty files"
    assert before["git_root"] == str(repo)
    [changed] = after["dirty"]
    assert (changed["path"], changed["status"].strip(".")) == ("app.py", "M")
    assert changed["size"] == len("x = 1\nprint(x)\nx = 2\n")
