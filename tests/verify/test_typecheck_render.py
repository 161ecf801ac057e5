"""The warm servers' diagnostics written as the tool's CLI would print them, so one parser
reads both (verify/rungs/typecheck.py)."""

from __future__ import annotations

from pathlib import Path

from agent_habitat.verify.parsers import parse_pyright, parse_ty
from agent_habitat.verify.rungs.typecheck import _pyright_json, _ty_lines


def _lsp(line: int, col: int, severity: int, code: str, message: str) -> dict[str, object]:
    at = {"line": line, "character": col}
    return {
        "range": {"start": at, "end": at},
        "severity": severity,
        "code": code,
        "message": message,
    }


def test_pyright_diagnostics_keep_severity_drop_hints_and_leave_a_file_level_range_out(
    tmp_path: Path,
) -> None:
    found = {
        "pkg/a.py": [
            _lsp(3, 13, 1, "reportAssignmentType", "Type mismatch\n  detail"),
            _lsp(6, 0, 2, "reportUnknownVariableType", "unknown"),
            _lsp(7, 0, 4, "reportUnusedVariable", "a hint the CLI never prints"),
            _lsp(0, 0, 1, "reportImportCycles", "Cycle detected"),
        ]
    }
    text, errors = _pyright_json(level_error=False)(tmp_path, found)
    assert errors == 2
    parsed = parse_pyright(text, tmp_path, source="basedpyright")
    assert [(d.file, d.line, d.col, d.code, d.severity) for d in parsed] == [
        ("pkg/a.py", 4, 14, "reportAssignmentType", "error"),
        ("pkg/a.py", 7, 1, "reportUnknownVariableType", "warning"),
        ("pkg/a.py", None, None, "reportImportCycles", "error"),  # as the CLI's JSON has it
    ]
    assert parsed[0].message == "Type mismatch\n  detail"
    text, errors = _pyright_json(level_error=True)(tmp_path, found)
    assert [d.code for d in parse_pyright(text, tmp_path)] == [
        "reportAssignmentType",
        "reportImportCycles",
    ]


def test_ty_diagnostics_become_concise_lines_with_the_first_line_of_the_message(
    tmp_path: Path,
) -> None:
    found = {"pkg/b.py": [_lsp(3, 11, 1, "invalid-return-type", "Bad return\n\ninfo: more")]}
    text, errors = _ty_lines(tmp_path, found)
    assert (text, errors) == ("pkg/b.py:4:12: error[invalid-return-type] Bad return\n", 1)
    (diag,) = parse_ty(text, tmp_path)
    assert (diag.file, diag.line, diag.col, diag.message) == ("pkg/b.py", 4, 12, "Bad return")
