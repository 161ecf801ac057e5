"""A rung's report counts as new findings only what can make it red: a linter's warnings
(eslint's 52 on minimist 1.2.8's index.js, all at HEAD too) are no "new findings" of a
green rung, and are listed after the errors, few, marked as warnings."""

from __future__ import annotations

import io
from pathlib import Path

from agent_habitat.cli.verdict_text import render_verdict
from agent_habitat.mcp_tools.wire import lean_dump
from agent_habitat.verify import Diagnostic, RungResult, RungStatus
from agent_habitat.verify.runner.report import (
    NEW_SHOWN,
    PREEXISTING_SHOWN,
    EpochReport,
    for_a_model,
    rung_report,
)
from agent_habitat.verify.toolchains.node.parsers import parse_tsc


def _warning(line: int) -> Diagnostic:
    return Diagnostic(
        file="index.js",
        line=line,
        code="no-magic-numbers",
        severity="warning",
        message="No magic number: 1.",
        source="eslint",
    )


def test_warnings_of_a_green_lint_are_not_new_findings_and_are_listed_few() -> None:
    result = RungResult(
        rung="diagnose.files",
        task="v1.diagnose.files",
        state="green",
        tool="eslint",
        diagnostics=[_warning(i) for i in range(52)],
    )
    status = RungStatus(rung="diagnose.files", task="v1.diagnose.files", state="green")
    report = rung_report(status, result, None)
    assert report.new_findings == 0
    assert report.preexisting_findings == 0
    assert len(report.diagnostics) == 52  # the CLI's --json keeps them all
    epoch = EpochReport(epoch=1, task="v1", state="green", green=True, rungs=[report])
    report = for_a_model(epoch).rungs[0]
    assert len(report.diagnostics) == PREEXISTING_SHOWN < NEW_SHOWN
    assert all(d.severity == "warning" for d in report.diagnostics)
    wire = lean_dump(report)
    assert "new_findings" not in wire  # zero, as the listed errors say
    assert all(d["severity"] == "warning" for d in wire["diagnostics"])


def test_errors_come_first_and_count_while_warnings_follow_uncounted() -> None:
    error = Diagnostic(file="index.js", line=3, code="no-undef", message="x is not defined")
    result = RungResult(
        rung="diagnose.files",
        task="v1.diagnose.files",
        state="red",
        tool="eslint",
        diagnostics=[_warning(1), _warning(2), error],
        new_findings=1,
    )
    status = RungStatus(rung="diagnose.files", task="v1.diagnose.files", state="red")
    report = rung_report(status, result, None)
    assert report.new_findings == 1
    assert [d.code for d in report.diagnostics] == [
        "no-undef",
        "no-magic-numbers",
        "no-magic-numbers",
    ]
    wire = lean_dump(report)
    assert "new_findings" not in wire
    assert "severity" not in wire["diagnostics"][0]


def test_a_long_command_line_is_cut_visibly_never_into_another_path() -> None:
    tests = " ".join(f"tests/test_module_number_{i}.py" for i in range(40))
    result = RungResult(
        rung="test.scoped",
        task="v1.test.scoped",
        state="red",
        tool="pytest",
        command_line=f"python -m pytest -q {tests}",
        exit_code=1,
    )
    status = RungStatus(rung="test.scoped", task="v1.test.scoped", state="red")
    line = rung_report(status, result, None).command_line
    assert line is not None
    assert (len(line), line[-1]) == (500, "…")
    short = result.model_copy(update={"command_line": "python -m pytest -q tests/test_a.py"})
    assert rung_report(status, short, None).command_line == short.command_line


def test_two_errors_on_one_line_are_told_apart_by_their_columns() -> None:
    # unicode-width 0.1.11, `src/lib.rs:93` edited: rustc reports two E0308 on that line
    # (columns 56 and 79), and an agent read "E0308 mismatched types" twice, as if listed
    # twice. Each keeps its column where another finding shares its line; elsewhere none.
    def e0308(line: int, col: int) -> Diagnostic:
        return Diagnostic(
            file="src/lib.rs",
            line=line,
            col=col,
            code="E0308",
            message="mismatched types",
            source="cargo clippy",
        )

    result = RungResult(
        rung="diagnose.files",
        task="v1.diagnose.files",
        state="red",
        tool="cargo clippy",
        diagnostics=[e0308(93, 56), e0308(93, 79), e0308(120, 5)],
        new_findings=3,
    )
    status = RungStatus(rung="diagnose.files", task="v1.diagnose.files", state="red")
    report = rung_report(status, result, None)
    assert [(d.line, d.col) for d in report.diagnostics] == [(93, 56), (93, 79), (120, None)]
    wire = lean_dump(report)
    assert [d.get("col") for d in wire["diagnostics"]] == [56, 79, None]
    assert len({tuple(sorted(d.items())) for d in wire["diagnostics"]}) == 3


def test_a_tsc_finding_keeps_its_column_as_tsc_prints_it() -> None:
    # tsc's one location of an error is `file(line,col)`: the report gives it whole, and the
    # CLI's verdict prints it `file:line:col`; another tool's lone finding stays without.
    text = "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n"
    found = [
        *parse_tsc(text, Path("/p")),
        Diagnostic(file="src/b.ts", line=4, col=2, message="x", source="eslint"),
    ]
    result = RungResult(
        rung="compile.project",
        task="v1.compile.project",
        state="red",
        tool="tsc",
        diagnostics=found,
        new_findings=2,
    )
    status = RungStatus(rung="compile.project", task="v1.compile.project", state="red")
    report = rung_report(status, result, None)
    assert [(d.file, d.line, d.col) for d in report.diagnostics] == [
        ("src/a.ts", 3, 7),
        ("src/b.ts", 4, None),
    ]
    wire = lean_dump(report)
    assert wire["diagnostics"][0]["col"] == 7
    out = io.StringIO()
    render_verdict({"state": "red", "rungs": [lean_dump(report)]}, out)
    assert "src/a.ts:3:7" in out.getvalue()
