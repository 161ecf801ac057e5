"""`habitat cancel` with no host and nothing serving verify answers from `state.db` alone,
with the full path's text, `--json` and exit code; a process on record as serving verify, or
a project the full path would have to open (and record), takes the full path."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from agent_habitat.cli import main
from agent_habitat.workspace import Workspace
from cli_probe import Probed, full_path, probe

_FULL = "import agent_habitat.cli.verify_quiet as quiet\nquiet.quiet_cancel = lambda call: None\n"
"""The full path alone: the quiet reader stood down."""


def _cancel(root: Path, *argv: str) -> Probed:
    return probe(root, "cancel", *argv)


def test_with_nothing_serving_verify_cancel_answers_as_the_full_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["run", "true", "--project", str(project)])
    capsys.readouterr()
    with full_path(project, _FULL) as answer:  # one interpreter for the full path's answers
        for extra in ((), ("--json",), ("--task", "t-1")):
            argv = (*extra, "--project", str(project))
            quick = _cancel(project, *argv)
            assert quick.loaded == "", argv
            full = answer("cancel", *argv)
            assert "agent_habitat.habitat" in full.loaded, argv
            assert quick.answer() == full.answer(), argv
    assert "nothing to cancel" in quick.stdout


def test_a_server_on_record_or_a_project_to_open_takes_the_full_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["run", "true", "--project", str(project)])
    capsys.readouterr()
    # Not a git work tree and no --project: the full path opens the cwd as the project.
    assert "agent_habitat.habitat" in _cancel(project).loaded
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert _cancel(project).loaded == ""
    db = sqlite3.connect(Workspace.for_project(project).db_path)
    with db:  # a server that died: the full path drops its row
        db.execute(
            "INSERT INTO servers (pid, create_time, root, started_at, updated_at)"
            " VALUES (2147483646, 1.0, ?, 1.0, 1.0)",
            (str(project),),
        )
    db.close()
    dead = _cancel(project, "--project", str(project))
    assert "agent_habitat.habitat" in dead.loaded
    assert "nothing to cancel" in dead.stdout
    assert _cancel(project, "--project", str(project)).loaded == ""
