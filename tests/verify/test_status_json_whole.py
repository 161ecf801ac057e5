"""`habitat status --json` keeps every finding of the epoch (the README's promise for the
CLI's --json); an agent's answer lists the first ones, with the counts whole. On
google/uuid v1.6.0 it showed 4 of 5: one new, three of four pre-existing."""

from __future__ import annotations

import json
from pathlib import Path

from agent_habitat.mcp_tools.wire import fit, lean_dump
from agent_habitat.verify import Diagnostic, RungResult, RungStatus
from agent_habitat.verify.runner.cli_text import status_output
from agent_habitat.verify.runner.report import (
    PREEXISTING_SHOWN,
    EpochReport,
    VerifyStatusResult,
    rung_report,
)
from agent_habitat.workspace import Workspace


def _vet(line: int, *, old: bool) -> Diagnostic:
    return Diagnostic(
        file="uuid.go",
        line=line,
        code="printf",
        message=f"finding {line}",
        source="go vet",
        preexisting=old,
    )


def _status() -> VerifyStatusResult:
    found = [_vet(1, old=False), *(_vet(n, old=True) for n in range(2, 6))]
    result = RungResult(
        rung="diagnose.files",
        task="v1.diagnose.files",
        state="red",
        tool="go vet",
        diagnostics=found,
        new_findings=1,
        preexisting_findings=4,
    )
    status = RungStatus(rung="diagnose.files", task="v1.diagnose.files", state="red")
    rung = rung_report(status, result, None)
    epoch = EpochReport(epoch=1, task="v1", state="red", green=False, rungs=[rung])
    return VerifyStatusResult(green=False, summary="red", stale=False, epoch=epoch)


def test_status_json_lists_every_finding(tmp_path: Path) -> None:
    workspace = Workspace(root=tmp_path, state_dir=tmp_path / "state")  # nothing warm
    text, code = status_output(_status(), workspace, as_json=True)
    assert code == 1
    (rung,) = json.loads(text)["epoch"]["rungs"]
    assert [d["line"] for d in rung["diagnostics"]] == [1, 2, 3, 4, 5]


def test_an_agent_reads_the_first_pre_existing_ones_and_every_count() -> None:
    wire = lean_dump(fit(_status()))
    (rung,) = wire["epoch"]["rungs"]
    assert len(rung["diagnostics"]) == 1 + PREEXISTING_SHOWN
    assert rung["preexisting_findings"] == 4  # more than listed: the count says it
