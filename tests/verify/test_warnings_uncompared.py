"""A rung with warnings and no error is settled without HEAD's check (nothing of it could be
red), so its warnings are not compared with HEAD's: the answer says so, and a failed
verify_run leaves a passing rung's warnings out (qs 6.13.0's `lib/parse.js:82 no-continue`
and fnv 1.0.7's `clippy::assign_op_pattern`, both at HEAD, read as the change's). A rung that
was settled against HEAD (it had an error) names the warnings HEAD lacks as new, in its reason
and in a green's summary: fastrand 2.5.0's new `clippy::needless_return` beside a bench error at
HEAD read "no new cargo clippy finding", and the green named only the tool."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_habitat.mcp_tools.wire import lean_dump
from agent_habitat.verify import Diagnostic, RungResult, RungStatus
from agent_habitat.verify.baseline import BaseResult
from agent_habitat.verify.rungs.compare import UNCOMPARED, settle
from agent_habitat.verify.runner.report import (
    EpochReport,
    VerifyRunResult,
    rung_report,
)
from agent_habitat.verify.runner.text import checked
from ladder_runs import tree_ctx

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


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def crate(tmp_path: Path) -> Path:
    """A committed crate whose bench has an error at HEAD (fastrand 2.5.0's `#![feature]`)."""
    root = tmp_path / "crate"
    (root / "src").mkdir(parents=True)
    (root / "benches").mkdir()
    (root / "src" / "lib.rs").write_text(
        "pub fn even(n: u8) -> bool {\n    n % 2 == 0\n}\n", encoding="utf-8"
    )
    (root / "benches" / "bench.rs").write_text("#![feature(test)]\n", encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    return root


def _bench_error() -> Diagnostic:
    return Diagnostic(
        file="benches/bench.rs",
        line=1,
        code="E0554",
        message="`#![feature]` may not be used on the stable release channel",
        source="cargo clippy",
    )


def _needless_return() -> Diagnostic:
    return Diagnostic(
        file="src/lib.rs",
        line=2,
        code="clippy::needless_return",
        severity="warning",
        message="unneeded `return` statement",
        source="cargo clippy",
    )


async def test_a_warning_head_does_not_have_is_named_new_beside_a_pre_existing_error(
    crate: Path,
) -> None:
    (crate / "src" / "lib.rs").write_text(
        "pub fn even(n: u8) -> bool {\n    return n % 2 == 0;\n}\n", encoding="utf-8"
    )
    ran = RungResult(
        rung="diagnose.files",
        task="v1.diagnose.files",
        state="red",
        tool="cargo clippy",
        diagnostics=[_bench_error(), _needless_return()],
    )

    async def head(tree: Any) -> tuple[BaseResult, bool]:
        return BaseResult(exit_code=101, findings=[_bench_error()]), False

    result = await settle(tree_ctx(crate, "v1"), ran, head)
    assert result.state == "green"
    assert result.reason == (
        "no new cargo clippy error, 1 new warning (not red): src/lib.rs:2 "
        "clippy::needless_return; 1 pre-existing at HEAD (listed, not red)"
    )
    status = RungStatus(
        rung="diagnose.files",
        task="v1.diagnose.files",
        state="green",
        tool=result.tool,
        notes=result.notes,
    )
    epoch = EpochReport(
        epoch=1, task="v1", state="green", green=True, rungs=[rung_report(status, result, None)]
    )
    assert checked(epoch) == (
        "cargo clippy (1 finding(s) at HEAD too: not red); "
        "1 new warning (not red): src/lib.rs:2 clippy::needless_return"
    )


def test_a_green_names_no_warning_it_did_not_compare_with_head() -> None:
    result = _green_lint().model_copy(update={"notes": [UNCOMPARED]})
    status = RungStatus(
        rung="diagnose.files",
        task="v1.diagnose.files",
        state="green",
        tool=result.tool,
        notes=result.notes,
    )
    epoch = EpochReport(
        epoch=1, task="v1", state="green", green=True, rungs=[rung_report(status, result, None)]
    )
    assert checked(epoch) == "eslint"
