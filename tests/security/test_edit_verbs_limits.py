"""The edit verbs write text, never git's files, and never over a change made meanwhile.

Issue 23 ("Low"): `file_write` wrote NUL bytes though its description refuses binary
content, a nested repository's `.git` (`sub/.git/hooks/pre-commit`) was writable, and
`file_edit` lost the lines another process appended while the edit was applied.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from agent_habitat.files import editor
from agent_habitat.files.models import Edit
from agent_habitat.files.text import apply_edits
from mcp_tools.helpers import make_project, primary_client
from tool_results import data, text

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")


@pytest.mark.finding("nul-content")
async def test_file_write_refuses_nul_bytes_naming_content(project: Path) -> None:
    async with primary_client(project) as (_, client):
        result = await client.call_tool("file_write", {"path": "a.txt", "content": "a\0b\n"})
        edit = await client.call_tool(
            "file_edit", {"path": "a.txt", "edits": [{"old": "a", "new": "\0"}]}
        )
    assert result.is_error
    message = text(result)
    assert "argument `content`" in message
    assert "NUL character at character 1" in message
    assert "remove the NUL characters" in message
    assert not (project / "a.txt").exists()
    assert edit.is_error
    assert "argument `edits.0.new`" in text(edit)


@pytest.mark.finding("nested-git")
@pytest.mark.parametrize(
    "path",
    [
        "sub/.git/hooks/pre-commit",
        "sub/.git/config",
        "deep/er/vendor/.git/hooks/post-checkout",
        "wt/.git",  # a worktree's (or submodule's) gitdir link file
        "sub/.GIT/hooks/pre-commit",
    ],
)
async def test_a_nested_git_folder_is_never_written(project: Path, path: str) -> None:
    (project / "sub" / ".git" / "hooks").mkdir(parents=True)
    (project / "sub" / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (project / "wt").mkdir()
    (project / "wt" / ".git").write_text("gitdir: ../.git/worktrees/wt\n", encoding="utf-8")
    async with primary_client(project) as (_, client):
        written = await client.call_tool("file_write", {"path": path, "content": "#!/bin/sh\n"})
        edited = await client.call_tool(
            "file_edit", {"path": "sub/.git/config", "edits": [{"old": "core", "new": "x"}]}
        )
        ok = await client.call_tool(
            "file_write", {"path": "sub/src/gitignore.git", "content": "x\n"}
        )
    for result in (written, edited):
        assert result.is_error
        assert "is inside .git; the edit verbs never change git's own files" in text(result)
    assert not (project / "sub" / ".git" / "hooks" / "pre-commit").exists()
    assert (project / "sub" / ".git" / "config").read_text(encoding="utf-8") == "[core]\n"
    assert (project / "wt" / ".git").read_text(encoding="utf-8").startswith("gitdir:")
    assert data(ok)["created"] is True  # a name merely containing .git is an ordinary file


@pytest.mark.finding("edit-race")
async def test_file_edit_never_loses_lines_another_process_appends_meanwhile(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = project / "log.txt"
    log.write_text("first\n", encoding="utf-8")
    apply = apply_edits

    def apply_while_another_process_appends(text: str, edits: Sequence[Edit], label: str) -> str:
        # A real process appends between the edit's read and its rename.
        appender = "import sys; open(sys.argv[1], 'a').write('appended\\n')"
        subprocess.run([sys.executable, "-c", appender, str(log)], check=True, timeout=60)
        return apply(text, edits, label)

    monkeypatch.setattr(editor, "apply_edits", apply_while_another_process_appends)
    async with primary_client(project) as (_, client):
        raced = await client.call_tool(
            "file_edit", {"path": "log.txt", "edits": [{"old": "first", "new": "1st"}]}
        )
        monkeypatch.setattr(editor, "apply_edits", apply)
        retried = await client.call_tool(
            "file_edit", {"path": "log.txt", "edits": [{"old": "first", "new": "1st"}]}
        )
    assert raced.is_error
    assert "log.txt changed while the edit was being applied" in text(raced)
    assert "read the file again and retry the edit" in text(raced)
    assert data(retried)["edits"] == 1
    assert log.read_text(encoding="utf-8") == "1st\nappended\n"
    assert [p.name for p in project.iterdir() if p.name.endswith(".habitat-tmp")] == []
