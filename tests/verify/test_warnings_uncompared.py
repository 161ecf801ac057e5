"""A rung with warnings and no error is settled without HEAD's check (nothing of it could be
red), so its warnings are not compared with HEAD's: the answer says so, and a failed
verify_run leaves a passing rung's warnings out (qs 6.13.0's `lib/parse.js:82 no-continue`
and fnv 1.0.7's `clippy::assign_op_pattern`, both at HEAD, read as the change's)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_habitat.mcp_tools.wire import lean_dump
from agent_habitat.verify import Diagnostic, RungResult, RungStatus
from agent_habitat.verify.rungs.compare import UNCOMPARED, settle
from agent_habitat.verify.runner.report import (
    EpochReport,
    VerifyRunResult,
    rung_report,
)

pytestmark = pytest.mark.anyio


def _warning() -> Diagnostic:
    return Diagnostic(
        file="lib/parse.js",
        line=82,
        code="no-continue",
        severity="warning",
        message="Unexpected use of continue statement.",
        source="eslint",
    )


def _green_lint() -> RungResult:
    return RungResult(
        rung="diagnose.files",
        task="v1.diagnose.files",
        state="green",
        tool="eslint",
        diagnostics=[_warning()],
    )


async def test_a_green_rung_s_warnings_say_they_were_not_compared_with_head() -> None:
    async def never(head: Any) -> Any:
        raise AssertionError("HEAD's check is not paid for warnings alone")

    # No error: settle returns before it looks at the context or HEAD.
    result = await settle(None, _green_lint(), never)  # type: ignore[arg-type]
    assert result.state == "green"
    assert result.baseline is None
    assert UNCOMPARED in result.notes
    status = RungStatus(
        rung="diagnose.files", task="v1.diagnose.files", state="green", notes=result.notes
    )
    report = rung_report(status, result, None)
    assert report.diagnostics[0].severity == "warning"
    assert UNCOMPARED in lean_dump(report)["notes"]


async def test_a_rung_without_warnings_carries_no_such_note() -> None:
    async def never(head: Any) -> Any:
        raise AssertionError("no HEAD check for a clean rung")

    clean = _green_lint().model_copy(update={"diagnostics": []})
    result = await settle(None, clean, never)  # type: ignore[arg-type]
    assert result.notes == []


def test_a_failed_verify_run_leaves_a_passing_rung_s_warnings_out() -> None:
    lint = rung_report(
        RungStatus(rung="diagnose.files", task="v1.diagnose.files", state="green"),
        _green_lint(),
        None,
    )
    failing = Diagnostic(
        file="test/parse.js", line=3, code="AssertionError", message="t fails", source="tape"
    )
    tests = rung_report(
        RungStatus(rung="test.scoped", task="v1.test.scoped", state="red"),
        RungResult(rung="test.scoped", task="v1.test.scoped", state="red", diagnostics=[failing]),
        None,
    )
    epoch = EpochReport(epoch=1, task="v1", state="red", green=False, rungs=[lint, tests])
    result = VerifyRunResult(
        task="v1", epoch=1, snapshot="s", state="red", green=False, summary="red", result=epoch
    )
    rungs = lean_dump(result)["result"]["rungs"]
    assert rungs[0] == {"rung": "diagnose.files", "state": "green"}
    assert rungs[1]["diagnostics"][0]["code"] == "AssertionError"
