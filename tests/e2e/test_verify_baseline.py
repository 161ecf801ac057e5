"""Red means the change did it, on a project with old findings and no lint or type config:
real ruff, dmypy and a configured command, compared with the same tool on HEAD."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, RungName, RungResult, run_ladder, stop_type_daemon
from git_tree import IGNORED, commit_tree, ladder_pyproject
from git_tree import git as _git
from git_tree import write as _write

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CORE = """import os


def double(x: int) -> int:
    return x * 2


def broken() -> int:
    return "not an int"
"""
LINT_SH = """#!/bin/sh
# Reports every TODO as a finding, the way a configured linter would.
status=0
for f in "$@"; do
  grep -n TODO "$f" | while IFS=: read -r n _; do echo "$f:$n: error: TODO left"; done
  grep -q TODO "$f" && status=1
done
exit $status
"""


@pytest.fixture
async def legacy(tmp_path: Path) -> AsyncIterator[Path]:
    root = tmp_path / "legacy"
    _write(root, "legacy/__init__.py", "")
    _write(root, "legacy/core.py", CORE)
    files = {".gitignore": IGNORED, "pyproject.toml": ladder_pyproject("legacy")}
    commit_tree(root, files, "old code with old findings")
    yield root
    await stop_type_daemon(root)


async def _rung(root: Path, rung: RungName, environ: dict[str, str] | None = None) -> RungResult:
    request = LadderRequest(rungs=[rung])
    result = await run_ladder(root, request, bus=InMemoryEventBus("t"), environ=environ or {})
    (only,) = result.rungs
    return only


def _prepend(root: Path, rel: str, text: str) -> None:
    _write(root, rel, text + (root / rel).read_text(encoding="utf-8"))


async def test_old_ruff_findings_on_moved_lines_are_preexisting_and_new_ones_red(
    legacy: Path,
) -> None:
    _prepend(legacy, "legacy/core.py", '"""Core."""\n')
    green = await _rung(legacy, "diagnose.files")
    assert green.state == "green", green
    assert (green.new_findings, green.preexisting_findings) == (0, 1)
    assert [(d.code, d.line, d.preexisting) for d in green.diagnostics] == [("F401", 2, True)]
    assert green.baseline is not None
    assert green.baseline.startswith("HEAD ")
    assert "(cached)" not in green.baseline
    _prepend(legacy, "legacy/core.py", "import sys\n")
    red = await _rung(legacy, "diagnose.files")
    assert red.state == "red"
    assert [(d.code, d.line, d.preexisting) for d in red.diagnostics] == [
        ("F401", 1, False),
        ("F401", 3, True),
    ]
    assert red.reason is not None
    assert red.reason.startswith("1 new ruff finding(s) (+1 pre-existing)")
    assert red.baseline is not None
    assert red.baseline.endswith("(cached)")


async def test_without_a_ruff_config_only_bug_rules_count_unless_lint_is_strict(
    legacy: Path,
) -> None:
    # UP031 (percent formatting) is style, in ruff's defaults but not in F + E9.
    _write(legacy, "legacy/core.py", CORE + '\nA = "%s" % 1\n')
    default = await _rung(legacy, "diagnose.files")
    assert default.state == "green"
    assert {d.code for d in default.diagnostics} == {"F401"}
    assert any("configures no ruff" in n for n in default.notes)
    strict = await _rung(legacy, "diagnose.files", {"HABITAT_LADDER_LINT": "strict"})
    assert strict.state == "red"
    assert strict.baseline == "strict"
    assert not any(d.preexisting for d in strict.diagnostics)
    assert {"F401", "UP031"} <= {d.code for d in strict.diagnostics}


async def test_a_file_new_since_head_has_no_baseline_so_all_its_findings_are_new(
    legacy: Path,
) -> None:
    _write(legacy, "legacy/extra.py", "import os\n")
    result = await _rung(legacy, "diagnose.files")
    assert result.state == "red"
    assert [(d.file, d.preexisting) for d in result.diagnostics] == [("legacy/extra.py", False)]


async def test_mypy_checks_a_project_without_config_and_only_new_errors_are_red(
    legacy: Path,
) -> None:
    _write(legacy, "legacy/core.py", CORE.replace("def double", "LIMIT = 2\n\n\ndef double"))
    comment = await _rung(legacy, "compile.project")
    assert (comment.state, comment.tool) == ("green", "dmypy"), comment
    assert (comment.new_findings, comment.preexisting_findings) == (0, 1)
    assert comment.diagnostics[0].code == "return-value"
    assert any("configures no mypy" in n for n in comment.notes)
    _write(legacy, "legacy/core.py", CORE + '\n\ndef g() -> int:\n    return "nope"\n')
    red = await _rung(legacy, "compile.project")
    assert red.state == "red"
    assert [(d.line, d.preexisting) for d in red.diagnostics if d.severity == "error"] == [
        (13, False),
        (9, True),
    ]
    assert red.baseline is not None
    assert red.baseline.endswith("(cached)")


async def test_a_configured_linter_with_old_findings_is_compared_with_head(legacy: Path) -> None:
    _write(legacy, "lint.sh", LINT_SH)
    _write(legacy, "legacy/core.py", CORE + "# TODO: old\n")
    pyproject = legacy / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8") + '"diagnose.files" = "sh lint.sh {files}"\n',
        encoding="utf-8",
    )
    _git(legacy, "add", "-A")
    _git(legacy, "commit", "-qm", "a linter and an old TODO")
    _prepend(legacy, "legacy/core.py", "# header\n")
    old = await _rung(legacy, "diagnose.files")
    assert (old.state, old.tool) == ("green", "configured"), old
    assert old.preexisting_findings == 1
    _write(legacy, "legacy/core.py", CORE + "# TODO: old\n# TODO: new\n")
    new = await _rung(legacy, "diagnose.files")
    assert new.state == "red"
    assert [(d.line, d.preexisting) for d in new.diagnostics] == [(11, False), (10, True)]


async def test_a_line_too_long_at_head_and_still_too_long_after_an_edit_is_not_new(
    legacy: Path,
) -> None:
    long_line = (
        "LIMITS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', "
        "'kappa', 'mu']"
    )
    pyproject = legacy / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8") + '\n[tool.ruff.lint]\nselect = ["E501", "F"]\n',
        encoding="utf-8",
    )
    _write(legacy, "legacy/core.py", CORE + long_line + "\n")
    _git(legacy, "add", "-A")
    _git(legacy, "commit", "-qm", "a long line")
    # One word longer: ruff's message ("Line too long (89 > 88)") and the text both change.
    edited = long_line.replace("'theta'", "'theta', 'iota'")
    _write(legacy, "legacy/core.py", '"""Core."""\n' + CORE + edited + "\n")
    result = await _rung(legacy, "diagnose.files")
    assert result.state == "green", result.diagnostics
    assert [(d.code, d.preexisting) for d in result.diagnostics] == [
        ("F401", True),
        ("E501", True),
    ]
    _write(legacy, "legacy/core.py", CORE + edited + "\n" + edited.replace("LIMITS", "MORE") + "\n")
    red = await _rung(legacy, "diagnose.files")
    assert red.state == "red"
    assert [(d.code, d.line, d.preexisting) for d in red.diagnostics] == [
        ("E501", 11, False),
        ("F401", 1, True),
        ("E501", 10, True),
    ]


async def test_a_type_error_on_an_edited_line_is_preexisting_and_a_new_code_there_is_new(
    legacy: Path,
) -> None:
    # The message names the value, so a changed literal changes the message and the text.
    _write(legacy, "legacy/core.py", CORE.replace('"not an int"', '"still not an int"'))
    same = await _rung(legacy, "compile.project")
    assert same.state == "green", same
    assert (same.new_findings, same.preexisting_findings) == (0, 1)
    _write(legacy, "legacy/core.py", CORE.replace('"not an int"', "undefined_name"))
    new = await _rung(legacy, "compile.project")
    assert new.state == "red", new
    first = next(d for d in new.diagnostics if d.severity == "error")
    assert (first.code, first.preexisting) == ("name-defined", False)
