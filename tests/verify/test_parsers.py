from __future__ import annotations

import json
from pathlib import Path

from agent_habitat.verify.parsers import (
    parse_compileall,
    parse_generic,
    parse_junit,
    parse_mypy,
    parse_pyrefly,
    parse_pyright,
    parse_pytest_summary,
    parse_ruff,
    parse_ty,
)


def test_ruff_json_becomes_located_diagnostics_relative_to_the_root(tmp_path: Path) -> None:
    text = json.dumps(
        [
            {
                "code": "F401",
                "message": "`os` imported but unused",
                "filename": str(tmp_path / "pkg" / "a.py"),
                "location": {"row": 1, "column": 8},
            },
            {
                "code": None,
                "message": "Expected ':'",
                "filename": "b.py",
                "location": {"row": 3, "column": 1},
            },
        ]
    )
    diags = parse_ruff(text, tmp_path)
    assert [(d.file, d.line, d.col, d.code) for d in diags] == [
        ("pkg/a.py", 1, 8, "F401"),
        ("b.py", 3, 1, "syntax"),
    ]
    assert diags[0].source == "ruff"


def test_mypy_text_lines_keep_the_code_column_and_severity(tmp_path: Path) -> None:
    text = (
        'src/p/a.py:2:12: error: Incompatible return value type (got "str", expected "int")'
        "  [return-value]\n"
        "src/p/a.py:5: note: See https://example\n"
        "setup.cfg: note: unused section(s): [mypy-tests.*]\n"
        "src/p/b.py: error: Duplicate module named 'b'\n"
        "Success: no issues found\n"
    )
    diags = parse_mypy(text, tmp_path)
    assert [(d.file, d.line, d.col, d.code, d.severity) for d in diags] == [
        ("src/p/a.py", 2, 12, "return-value", "error"),
        ("src/p/a.py", 5, None, None, "note"),
        ("setup.cfg", None, None, None, "note"),
        ("src/p/b.py", None, None, None, "error"),
    ]
    assert diags[0].message.startswith("Incompatible return value type")


def test_a_mypy_note_keeps_its_indent(tmp_path: Path) -> None:
    # An overload's signatures come as indented notes; ty's concise lines are stripped.
    diags = parse_mypy("src/a.py:4: note:     def f(x: int) -> int\n", tmp_path)
    assert [d.message for d in diags] == ["    def f(x: int) -> int"]


def test_pyright_json_lines_become_one_based(tmp_path: Path) -> None:
    text = "some banner\n" + json.dumps(
        {
            "generalDiagnostics": [
                {
                    "file": str(tmp_path / "a.py"),
                    "severity": "error",
                    "message": "bad",
                    "range": {"start": {"line": 0, "character": 4}},
                    "rule": "reportGeneralTypeIssues",
                },
                {"file": "b.py", "severity": "information", "message": "fyi", "range": {}},
            ]
        }
    )
    diags = parse_pyright(text, tmp_path)
    assert [(d.file, d.line, d.col, d.code, d.severity) for d in diags] == [
        ("a.py", 1, 5, "reportGeneralTypeIssues", "error"),
        ("b.py", None, None, None, "note"),
    ]


def test_junit_failures_give_the_node_id_and_the_assertion_line(tmp_path: Path) -> None:
    xml = tmp_path / "r.xml"
    xml.write_text(
        """<?xml version="1.0"?><testsuites><testsuite>
<testcase classname="tests.test_a.TestX" name="test_y" file="tests/test_a.py" line="9">
<failure message="assert 1 == 2">def test_y():
&gt;       helper()

tests/test_a.py:11: 
_ _ _
tests/helpers.py:3: in helper
    assert 1 == 2
E   assert 1 == 2

tests/helpers.py:3: AssertionError</failure></testcase>
<testcase classname="tests.test_a" name="test_ok" file="tests/test_a.py" line="1"/>
<testcase classname="" name="tests.test_b" file="tests/test_b.py">
<error message="collection failure">tests/test_b.py:1: in &lt;module&gt;
E   ImportError: no</error></testcase>
</testsuite></testsuites>""",
        encoding="utf-8",
    )
    diags = parse_junit(xml, tmp_path)
    assert diags is not None
    assert [(d.file, d.line, d.code) for d in diags] == [
        ("tests/helpers.py", 3, "AssertionError"),
        ("tests/test_b.py", 1, "ImportError"),
    ]
    # Raised in a helper (tabulate 0.9's test/common.py): the test's own line is named too.
    assert diags[0].message == "tests/test_a.py::TestX::test_y (tests/test_a.py:11): assert 1 == 2"
    assert parse_junit(tmp_path / "missing.xml", tmp_path) is None


def test_a_collection_error_names_the_projects_files_relative_to_its_root(
    tmp_path: Path,
) -> None:
    # ImportError names the module's file by its absolute path: a run in HEAD's export
    # names another folder than the tree's run, and the two must read the same.
    for root in (tmp_path / "tree", tmp_path / "export"):
        root.mkdir()
        xml = root / "r.xml"
        xml.write_text(
            f"""<?xml version="1.0"?><testsuites><testsuite>
<testcase classname="" name="tests.test_b" file="tests/test_b.py">
<error message="collection failure">tests/test_b.py:1: in &lt;module&gt;
E   ImportError: cannot import name 'x' from 'p.m' ({root}/p/m.py)</error></testcase>
</testsuite></testsuites>""",
            encoding="utf-8",
        )
        diags = parse_junit(xml, root)
        assert diags is not None
        assert [d.message for d in diags] == [
            "tests/test_b.py: collection error: ImportError: cannot import name 'x' from "
            "'p.m' (p/m.py) (raised at tests/test_b.py:1)"
        ]


def test_pytest_summary_lines_are_the_fallback() -> None:
    text = "FAILED tests/test_a.py::test_y - assert 1 == 2\nERROR tests/test_b.py\n1 failed"
    diags = parse_pytest_summary(text)
    assert [(d.file, d.code, d.message) for d in diags] == [
        ("tests/test_a.py", "failed", "tests/test_a.py::test_y: assert 1 == 2"),
        ("tests/test_b.py", "error", "tests/test_b.py: error"),
    ]


def test_compileall_errors_name_the_file_line_and_error(tmp_path: Path) -> None:
    text = (
        "*** Error compiling 'src/p/a.py'...\n"
        '  File "src/p/a.py", line 3\n    def f(:\n          ^\n'
        "SyntaxError: invalid syntax\n"
    )
    diags = parse_compileall(text, tmp_path)
    assert [(d.file, d.line, d.code, d.message) for d in diags] == [
        ("src/p/a.py", 3, "SyntaxError", "invalid syntax")
    ]


def test_generic_lines_count_only_when_the_file_exists(tmp_path: Path) -> None:
    (tmp_path / "build.sh").write_text("x", encoding="utf-8")
    text = "build.sh:4:2: warning[SC2086]: quote this\nnope.sh:1: error: gone\nplain text"
    diags = parse_generic(text, tmp_path)
    assert [(d.file, d.line, d.col, d.code, d.severity, d.message) for d in diags] == [
        ("build.sh", 4, 2, "SC2086", "warning", "quote this")
    ]


def test_ty_concise_lines_keep_the_rule_column_and_severity(tmp_path: Path) -> None:
    text = (
        "pkg/a.py:4:14: error[invalid-assignment] Object of type `int` is not assignable\n"
        f"{tmp_path}/pkg/b.py:7:1: warning[unused-ignore-comment] Unused blanket `type: ignore`\n"
        "Found 2 diagnostics\n"
    )
    found = parse_ty(text, tmp_path)
    assert [(d.file, d.line, d.col, d.code, d.severity) for d in found] == [
        ("pkg/a.py", 4, 14, "invalid-assignment", "error"),
        ("pkg/b.py", 7, 1, "unused-ignore-comment", "warning"),
    ]
    assert found[0].message == "Object of type `int` is not assignable"
    assert {d.source for d in found} == {"ty"}


def test_pyrefly_json_gives_the_kind_as_code_and_the_concise_message(tmp_path: Path) -> None:
    text = (
        '{"errors": [{"line": 4, "column": 14, "path": "pkg/a.py", "name": "bad-assignment", '
        '"description": "long\\nmore", "concise_description": "`int` is not `str`", '
        '"severity": "error"}, {"line": 1, "column": 1, "path": "pkg/b.py", '
        '"name": "deprecated", "description": "d", "severity": "warn"}]}\n INFO 2 errors'
    )
    found = parse_pyrefly(text, tmp_path)
    assert [(d.file, d.line, d.col, d.code, d.severity, d.message) for d in found] == [
        ("pkg/a.py", 4, 14, "bad-assignment", "error", "`int` is not `str`"),
        ("pkg/b.py", 1, 1, "deprecated", "warning", "d"),
    ]
    assert parse_pyrefly("no json here", tmp_path) == []


def test_a_failed_doctest_is_located_at_its_example_with_what_it_expected_and_got(
    tmp_path: Path,
) -> None:
    # voluptuous 0.16.0's tests.md (--doctest-glob=*.md): pytest says tests.md:210; the rung
    # said tests.md:1 with the first line of the report's context ("201     >>> named = …").
    xml = tmp_path / "r.xml"
    xml.write_text(
        """<?xml version="1.0"?><testsuites><testsuite>
<testcase classname="vol.tests.tests.md" name="tests.md" file="vol/tests/tests.md" line="0">
<failure message="201     &gt;&gt;&gt; named = 1">201     &gt;&gt;&gt; named = 1
209     &gt;&gt;&gt; schema = Schema(Object({'q': 'one'}, cls=Structure))
210     &gt;&gt;&gt; schema(NamedTuple(q='one'))  # doctest: +IGNORE_EXCEPTION_DETAIL
Expected:
    Traceback (most recent call last):
    ...
    MultipleInvalid: expected a &lt;class 'Structure'&gt;
Got:
    NamedTuple(q='one')

/abs/vol/tests/tests.md:210: DocTestFailure</failure></testcase>
<testcase classname="test_b.txt" name="test_b.txt" file="test_b.txt" line="0">
<failure message="001 Intro">001 Intro
003     &gt;&gt;&gt; 1/0
UNEXPECTED EXCEPTION: ZeroDivisionError('division by zero')
Traceback (most recent call last):
  File "/usr/lib/python3.11/doctest.py", line 1353, in __run
  File "&lt;doctest test_b.txt[0]&gt;", line 1, in &lt;module&gt;
ZeroDivisionError: division by zero
/abs/test_b.txt:3: UnexpectedException</failure></testcase>
</testsuite></testsuites>""",
        encoding="utf-8",
    )
    diags = parse_junit(xml, Path("/abs"))
    assert diags is not None
    assert [(d.file, d.line, d.code) for d in diags] == [
        ("vol/tests/tests.md", 210, "DocTestFailure"),
        ("test_b.txt", 3, "UnexpectedException"),
    ]
    assert diags[0].message == (
        "vol/tests/tests.md::tests.md: >>> schema(NamedTuple(q='one'))  "
        "# doctest: +IGNORE_EXCEPTION_DETAIL: expected: Traceback (most recent call last): "
        "... MultipleInvalid: expected a <class 'Structure'>; got: NamedTuple(q='one')"
    )
    assert diags[1].message == (
        "test_b.txt::test_b.txt: >>> 1/0: raised ZeroDivisionError: division by zero"
    )
