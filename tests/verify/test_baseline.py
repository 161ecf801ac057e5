"""Matching findings against HEAD's: by tool, code, message and source line text, else by
code on the line the diff maps it to."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_habitat.verify.baseline import (
    BaselineCache,
    BaseResult,
    fingerprint,
    mark_preexisting,
    new_whatever_head_has,
    summarize,
)
from agent_habitat.verify.line_map import line_map
from agent_habitat.verify.models import Diagnostic

HEAD = ["import os", "", "", "def f() -> int:", "    x = 1", "    return 2"]


def _diag(line: int, code: str = "F401", message: str = "`os` imported but unused") -> Diagnostic:
    return Diagnostic(file="pkg/mod.py", line=line, code=code, message=message, source="ruff")


def _mark(
    current: list[Diagnostic], base: list[Diagnostic], now: Sequence[str], head: Sequence[str]
) -> list[Diagnostic]:
    return mark_preexisting(current, base, lambda _: now, lambda _: head)


def test_a_finding_new_whatever_head_has_is_on_an_added_line_head_never_had() -> None:
    # Line 5 is added (no line of HEAD's maps to it) and HEAD's file has no such text: no
    # finding of HEAD's could match it under any pass. Of lines 7 and 8 one is added too, but
    # its text is HEAD's `return 2`: a HEAD finding could match it wherever it is.
    now = [*HEAD[:4], "    y: int = 'a'", "    x = 1", "    return 2", "    return 2"]
    found = [_diag(5, "E0308", "m"), _diag(7, "E0308", "m"), _diag(8, "E0308", "m")]
    assert line_map(HEAD, now).get(5) is None
    new = new_whatever_head_has(found, lambda _: now, lambda _: HEAD, {"pkg/mod.py"})
    assert [(d.line, d.preexisting) for d in new] == [(5, False)]
    # Only in a file the change touched (never a dependency's source or generated code).
    assert new_whatever_head_has(found, lambda _: now, lambda _: None, {"other.py"}) == []
    # Whatever HEAD's findings were, the comparison leaves it new.
    anything = [_diag(n, "E0308", "m") for n in range(1, 7)]
    marked = _mark([_diag(5, "E0308", "m")], anything, now, HEAD)
    assert [(d.line, d.preexisting) for d in marked] == [(5, False)]
    # An edited line stands for the one it replaced, where HEAD may have the finding.
    edited = [*HEAD[:4], "    x: int = 'a'", "    return 2"]
    touched = {"pkg/mod.py"}
    one = [_diag(5, "E0308", "m")]
    assert new_whatever_head_has(one, lambda _: edited, lambda _: HEAD, touched) == []
    # A file HEAD did not have: every finding in it.
    assert len(new_whatever_head_has(found, lambda _: now, lambda _: None, touched)) == 3


def test_a_finding_on_a_moved_line_still_matches_head() -> None:
    now = ['"""Docs."""', "", *HEAD]
    marked = _mark([_diag(3)], [_diag(1)], now, HEAD)
    assert [(d.line, d.preexisting) for d in marked] == [(3, True)]
    assert summarize(marked) == (0, 1)


def test_a_new_finding_on_a_moved_line_is_new() -> None:
    now = ["", *HEAD]
    unused = _diag(6, "F841", "Local variable `x` is assigned to but never used")
    marked = _mark([_diag(2), unused], [_diag(1)], now, HEAD)
    assert [(d.code, d.preexisting) for d in marked] == [("F841", False), ("F401", True)]
    assert summarize(marked) == (1, 1)


def test_a_fixed_finding_disappears_and_the_rest_still_match() -> None:
    unused = _diag(5, "F841", "Local variable `x` is assigned to but never used")
    now = ["import os", "", "", "def f() -> int:", "    return 2"]
    marked = _mark([_diag(1)], [_diag(1), unused], now, HEAD)
    assert [(d.code, d.preexisting) for d in marked] == [("F401", True)]


def test_the_same_finding_on_an_edited_line_is_preexisting() -> None:
    now = ["import os  # still unused", *HEAD[1:]]
    marked = _mark([_diag(1)], [_diag(1)], now, HEAD)
    assert [d.preexisting for d in marked] == [True]


def test_a_long_line_still_too_long_after_a_one_word_edit_is_not_new() -> None:
    head = ["import os", "", "def f() -> str:", "    return 'a very long line' * 3", ""]
    now = ["import os", "", "def f() -> str:", "    return 'a much longer line' * 3", ""]
    at_head = _diag(4, "E501", "Line too long (96 > 88)")
    still = _diag(4, "E501", "Line too long (97 > 88)")
    marked = _mark([still], [at_head], now, head)
    assert [d.preexisting for d in marked] == [True]
    assert summarize(marked) == (0, 1)


def test_a_code_that_names_no_kind_matches_only_with_its_message() -> None:
    # Go's compiler errors all have the code `compile`: another error on HEAD's broken line
    # is a different error, however the line was edited; the same error stays old.
    head = ["package b", "func F() int { return missing }"]
    now = ["package b", 'func F() int { return "two" }']
    at_head = _diag(2, "compile", "undefined: missing")
    other = _diag(2, "compile", 'cannot use "two" as int value in return statement')
    kinds = lambda d: d.code != "compile"  # noqa: E731
    marked = mark_preexisting([other], [at_head], lambda _: now, lambda _: head, kinds)
    assert [d.preexisting for d in marked] == [False]
    assert [d.preexisting for d in _mark([other], [at_head], now, head)] == [True]
    edited = ["package b", "func F() int { return missing + 0 }"]
    same = _diag(2, "compile", "undefined: missing")
    marked = mark_preexisting([same], [at_head], lambda _: edited, lambda _: head, kinds)
    assert [d.preexisting for d in marked] == [True]


def test_an_edited_line_that_moved_down_maps_through_the_diff() -> None:
    head = ["import os", "x = 'long'", "y = 2"]
    now = ['"""Docs."""', "", "import os", "x = 'longer'", "y = 2"]
    marked = _mark([_diag(4, "E501", "Line too long (99 > 88)")], [_diag(2, "E501")], now, head)
    assert [d.preexisting for d in marked] == [True]


def test_a_new_code_on_an_edited_line_is_new() -> None:
    head = ["import os", "x = 'long'"]
    now = ["import os", "x = 'longer'; y"]
    current = [_diag(2, "E501", "Line too long"), _diag(2, "F821", "Undefined name `y`")]
    marked = _mark(current, [_diag(2, "E501", "Line too long")], now, head)
    assert [(d.code, d.preexisting) for d in marked] == [("F821", False), ("E501", True)]


def test_the_same_code_on_an_inserted_line_is_new() -> None:
    head = ["x = 'long'", "y = 2"]
    now = ["x = 'long'", "z = 'also long'", "y = 2"]
    current = [_diag(1, "E501", "Line too long"), _diag(2, "E501", "Line too long")]
    marked = _mark(current, [_diag(1, "E501", "Line too long")], now, head)
    assert [(d.line, d.preexisting) for d in marked] == [(2, False), (1, True)]


def test_a_third_unused_name_on_an_edited_import_line_is_the_new_one() -> None:
    head = ["import os, sys"]
    now = ["import os, sys, json"]
    unused = [_diag(1, "F401", f"`{name}` imported but unused") for name in ("os", "sys", "json")]
    marked = _mark(unused, unused[:2], now, head)
    assert [(d.message, d.preexisting) for d in marked] == [
        ("`json` imported but unused", False),
        ("`os` imported but unused", True),
        ("`sys` imported but unused", True),
    ]


def test_an_identical_line_elsewhere_does_not_take_an_edited_lines_finding() -> None:
    head = ["x = 'long'", "", "x = 'long'"]
    now = ["x = 'longer'", "", "x = 'long'"]
    base = [_diag(1, "E501", "Line too long (10)"), _diag(3, "E501", "Line too long (10)")]
    current = [_diag(1, "E501", "Line too long (12)"), _diag(3, "E501", "Line too long (10)")]
    assert summarize(_mark(current, base, now, head)) == (0, 2)


def test_the_line_map_pairs_edited_lines_and_leaves_inserted_ones_out() -> None:
    head = ["a", "b", "c", "d"]
    now = ["a", "B", "new", "c", "d"]
    mapping = line_map(head, now)
    assert mapping[1] == 1
    assert mapping[2] == 2
    assert 3 not in mapping
    assert (mapping[4], mapping[5]) == (3, 4)


def test_a_copy_of_a_preexisting_finding_is_new_one_to_one() -> None:
    now = ["import os", "import os", *HEAD[1:]]
    marked = _mark([_diag(1), _diag(2)], [_diag(1)], now, HEAD)
    assert [d.preexisting for d in marked] == [False, True]


def test_a_file_new_since_head_has_only_new_findings() -> None:
    marked = mark_preexisting([_diag(1)], [], lambda _: HEAD, lambda _: None)
    assert summarize(marked) == (1, 0)


def test_messages_that_name_a_line_match_after_the_code_moved() -> None:
    base = _diag(4, "no-redef", 'Name "f" already defined on line 2')
    moved = _diag(6, "no-redef", 'Name "f" already defined on line 4')
    now = ["", "", *HEAD]
    assert _mark([moved], [base], now, HEAD)[0].preexisting


def test_another_tool_or_code_does_not_match() -> None:
    other = _diag(1).model_copy(update={"source": "mypy"})
    assert [d.preexisting for d in _mark([other], [_diag(1)], HEAD, HEAD)] == [False]


def test_the_cache_returns_what_was_put_and_a_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    cache = BaselineCache(tmp_path)
    key = fingerprint("ruff", "--select", "F", tmp_path / "ruff.toml")
    assert cache.get(key) is None
    cache.put(key, BaseResult(findings=[_diag(1)], exit_code=1))
    hit = cache.get(key)
    assert hit is not None
    assert hit.findings == [_diag(1)]
    assert hit.exit_code == 1
    next(tmp_path.rglob("*.json")).write_text("{not json", encoding="utf-8")
    assert cache.get(key) is None


def test_the_fingerprint_follows_a_config_files_content(tmp_path: Path) -> None:
    config = tmp_path / "ruff.toml"
    absent = fingerprint("ruff", config)
    config.write_text("line-length = 100\n", encoding="utf-8")
    first = fingerprint("ruff", config)
    assert first != absent
    config.write_text("line-length = 120\n", encoding="utf-8")
    assert fingerprint("ruff", config) != first


def test_the_line_map_follows_code_wrapped_in_a_new_block_and_long_files() -> None:
    head = ["def f():", "    x = 1", "", "    return x"]
    now = ["def f():", "    if True:", "        x = 1", "", "        return x"]
    assert line_map(head, now) == {1: 1, 3: 2, 4: 3, 5: 4}
    body = [line for n in range(3000) for line in (f"def f{n}():", "    return 1", "")]
    edited = [*body[:4500], "# inserted", *body[4500:]]
    edited[6000] += "  # edited"
    mapping = line_map(body, edited)
    assert 4501 not in mapping
    assert (mapping[4500], mapping[4502], mapping[6001]) == (4500, 4501, 6000)


def _mypy(line: int, code: str | None, message: str, severity: str = "error") -> Diagnostic:
    return Diagnostic(
        file="pkg/mod.py",
        line=line,
        code=code,
        message=message,
        source="mypy",
        severity=severity,  # type: ignore[arg-type]
    )


def test_a_note_goes_with_the_finding_on_its_line_old_with_an_old_one_new_with_a_new_one() -> None:
    # tabulate 0.9: HEAD's missing `wcwidth` stub error was pre-existing, but mypy's note
    # under it ("See https://mypy.readthedocs.io/…") was listed as a new finding, first.
    missing = _mypy(1, "import-not-found", 'Cannot find implementation for module "os"')
    see = _mypy(1, None, "See https://mypy.readthedocs.io/en/stable/running_mypy.html", "note")
    wrong = _mypy(5, "assignment", "Incompatible types in assignment")
    hint = _mypy(5, None, "Use a cast", "note")
    marked = _mark([see, missing, wrong, hint], [missing], HEAD, HEAD)
    assert [(d.line, d.severity, d.preexisting) for d in marked] == [
        (5, "error", False),
        (5, "note", False),
        (1, "note", True),
        (1, "error", True),
    ]


def test_heads_error_pairs_with_the_error_not_with_the_same_lint_as_a_warning() -> None:
    # One lint on one line, warned of in the lib and denied in its test build
    # (`#![cfg_attr(test, deny(warnings))]`); HEAD's run stopped before the lib's warning.
    # The tree's warning comes first: had it taken HEAD's error, the error was new (red).
    warning = _diag(1, "clippy::redundant_closure", "redundant closure")
    warning.severity = "warning"
    error = _diag(1, "clippy::redundant_closure", "redundant closure")
    error.severity = "error"
    head_error = error.model_copy()
    marked = _mark([warning, error], [head_error], HEAD, HEAD)
    assert [(d.severity, d.preexisting) for d in marked] == [("warning", False), ("error", True)]
    assert summarize(marked) == (0, 1)  # no new error: not red
