"""`project_open` opens projects only: never `/`, a home folder or another plain folder.

Issue 23 ("Low"): `project_open` accepted `/` or `$HOME`, which then became the edit
verbs' root: every file of the user was writable through `file_write`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_tools.helpers import make_project, primary_client
from tool_results import data, text

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.finding("not-a-project")]


async def test_project_open_refuses_the_file_system_root(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    async with primary_client(project) as (primary, client):
        result = await client.call_tool("project_open", {"path": "/"})
        assert primary.habitat.project.root == project.resolve()
    assert result.is_error
    assert "is the file system's root, not a project" in text(result)


async def test_project_open_refuses_a_home_folder_that_is_no_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path / "project")
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    async with primary_client(project) as (primary, client):
        result = await client.call_tool("project_open", {"path": str(home)})
        written = await client.call_tool(
            "file_write", {"path": str(home / ".bashrc"), "content": "evil\n"}
        )
        assert primary.habitat.project.root == project.resolve()
    assert result.is_error
    message = text(result)
    assert "(your home folder) is not a project" in message
    assert "open the repository's folder, or make this one a project (`git init`)" in message
    assert written.is_error  # still confined to the project that stayed open
    assert not (home / ".bashrc").exists()


async def test_project_open_accepts_a_repository_a_folder_in_it_and_a_project_file(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "project")
    (project / "sub").mkdir()
    plain_python = tmp_path / "lib"
    plain_python.mkdir()
    (plain_python / "pyproject.toml").write_text('[project]\nname = "lib"\n', encoding="utf-8")
    async with primary_client(project) as (_, client):
        inside = await client.call_tool("project_open", {"path": str(project / "sub")})
        by_file = await client.call_tool("project_open", {"path": str(plain_python)})
    assert data(inside)["root"] == str((project / "sub").resolve())
    assert data(by_file)["root"] == str(plain_python.resolve())
