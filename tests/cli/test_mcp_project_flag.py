"""`habitat mcp --project DIR` refuses a folder that is not there, naming the flag; a
`${workspaceFolder}` the client left unreplaced (the line `habitat init --client cursor`
writes, run by a client that does not expand it) says so, and what to write instead."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from agent_habitat.cli.mcp_cmds import run_mcp


def _args(project: str) -> argparse.Namespace:
    return argparse.Namespace(project=Path(project), embedded=True)


def test_a_missing_folder_is_refused_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_mcp(_args(str(tmp_path / "gone"))) == 2
    assert f"--project {tmp_path / 'gone'} is not a directory" in capsys.readouterr().err


def test_an_unreplaced_client_variable_is_named_with_the_fix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_mcp(_args("${workspaceFolder}")) == 2
    err = capsys.readouterr().err
    assert "--project ${workspaceFolder}: the MCP client did not replace ${workspaceFolder}" in err
    assert "habitat init --client" in err
