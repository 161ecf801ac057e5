"""`habitat status` is read by a person at a terminal: its next step is a command to type,
not an MCP tool. A trial on wcwidth 0.2.13 printed "run verify_run again" under a stale
epoch; the agent's verify_status keeps the tool's name."""

from __future__ import annotations

import json
from pathlib import Path

import psutil

from agent_habitat.verify.runner.cli_text import status_output
from agent_habitat.verify.runner.report import EpochReport, VerifyStatusResult
from agent_habitat.verify.runner.text import render_verify_status
from agent_habitat.workspace import Workspace


def _stale() -> VerifyStatusResult:
    epoch = EpochReport(
        epoch=1,
        task="v1",
        state="stale",
        verified_state="red",
        green=False,
        stale=True,
        changed=["wcwidth/wcwidth.py"],
        changed_count=1,
        snapshot="70e1dbf66ce2b8d5",
    )
    return VerifyStatusResult(green=False, summary="stale", stale=True, epoch=epoch)


def test_habitat_status_names_the_command_to_run_on_a_stale_epoch(tmp_path: Path) -> None:
    workspace = Workspace(root=tmp_path, state_dir=tmp_path / "state")
    text, code = status_output(_stale(), workspace, as_json=False)
    assert code == 1
    assert "run `habitat verify` again" in text
    assert "verify_run" not in text


def test_habitat_status_names_the_command_when_never_verified(tmp_path: Path) -> None:
    workspace = Workspace(root=tmp_path, state_dir=tmp_path / "state")
    never = VerifyStatusResult(green=False, summary="never verified: run verify_run", stale=False)
    text, _ = status_output(never, workspace, as_json=False)
    assert "never verified: run `habitat verify`" in text
    assert "verify_run" not in text


def test_the_agent_still_reads_the_tool_to_call() -> None:
    assert "run verify_run again" in render_verify_status(_stale())


def test_habitat_status_says_none_warm_only_when_no_daemon_is(tmp_path: Path) -> None:
    # destr 2.0.5 (TypeScript): "warm: none (dmypy daemon absent)" above the lines of its
    # warm tsc checker and eslint linter.
    workspace = Workspace(root=tmp_path, state_dir=tmp_path / "state")
    never = VerifyStatusResult(green=False, summary="never verified: run verify_run", stale=False)
    alone, _ = status_output(never, workspace, as_json=False)
    assert "warm: none (dmypy daemon absent)" in alone
    checkers = workspace.state_dir / "checker-warm"
    checkers.mkdir(parents=True)
    me = psutil.Process()
    record = {"pid": me.pid, "create_time": me.create_time(), "tool": "tsc", "owner": me.pid}
    (checkers / "tsc.json").write_text(json.dumps(record | {"kind": "checker"}), encoding="utf-8")
    text, _ = status_output(never, workspace, as_json=False)
    assert f"warm: tsc checker pid {me.pid}" in text
    assert "warm: none" not in text
