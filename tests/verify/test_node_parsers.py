"""The Node tools' reports as findings, on outputs captured from the real tools (eslint
9.39, biome 2.1, tsc 5.8, vitest 3.2, jest 30, node 20's test runner)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_habitat.verify.toolchains.node.parsers import (
    parse_biome,
    parse_eslint,
    parse_fail_lines,
    parse_jest_json,
    parse_node_junit,
    parse_tsc,
    suite_counts,
)
from agent_habitat.verify.toolchains.node.tap import parse_tap

DATA = Path(__file__).parent / "node_data"


def _text(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_eslint_rules_and_a_parse_error_are_findings_with_their_places() -> None:
    found = parse_eslint(_text("eslint.json"), Path("/tmp/cap"))
    assert [(d.file, d.line, d.col, d.code) for d in found] == [
        ("src/a.js", 2, 9, "no-unused-vars"),
        ("src/a.js", 3, 9, "eqeqeq"),
        ("src/b.ts", 1, 15, "syntax"),
    ]
    assert all(d.severity == "error" and d.source == "eslint" for d in found)
    assert found[2].message == "Parsing error: Unexpected token :"


def test_eslint_json_after_a_warning_line_on_the_same_stream_still_parses() -> None:
    text = "(node:1) ExperimentalWarning: something\n" + _text("eslint.json")
    assert len(parse_eslint(text, Path("/tmp/cap"))) == 3


def test_an_eslint_stdin_report_is_named_for_the_file_given() -> None:
    found = parse_eslint(_text("eslint.json"), Path("/tmp/cap"), stdin_file="lib/x.js")
    assert {d.file for d in found} == {"lib/x.js"}


def test_biome_spans_become_lines_and_columns_from_the_source_it_reports() -> None:
    found = parse_biome(_text("biome.json"), Path("/tmp/capb"))
    assert [(d.file, d.line, d.col, d.code, d.severity) for d in found] == [
        ("src/e.ts", 2, 3, "useConst", "warning"),
        ("src/e.ts", 2, 7, "noUnusedVariables", "warning"),
        ("src/e.ts", 3, 9, "noDoubleEquals", "error"),
        ("src/e.ts", 3, 17, "noDebugger", "error"),
        # the line holds a two-byte character before the span: columns count characters
        ("src/e.ts", 4, 14, "noDoubleEquals", "error"),
    ]


def test_biome_paths_are_made_relative_to_the_project_from_a_workspace(tmp_path: Path) -> None:
    found = parse_biome(_text("biome.json"), tmp_path / "packages" / "a", tmp_path)
    assert {d.file for d in found} == {"packages/a/src/e.ts"}


def test_tsc_lines_with_their_continuations_and_a_global_error() -> None:
    found = parse_tsc(_text("tsc.txt") + _text("tsc-continued.txt"), Path("/tmp/cap"))
    assert [(d.file, d.line, d.col, d.code) for d in found] == [
        ("src/b.ts", 1, 14, "TS2322"),
        ("src/b.ts", 2, 40, "TS2322"),
        ("src/b.ts", 1, 14, "TS2322"),
        ("src/c.ts", 4, 3, "TS2345"),
        (None, None, None, "TS5083"),
    ]
    assert found[3].message.endswith("does not exist in type 'Opts'.")
    assert "\n" in found[3].message


def test_vitest_json_a_failed_assertion_per_finding_and_the_counts() -> None:
    text = _text("vitest.json")
    found = parse_jest_json(text, Path("/tmp/cap"), "vitest")
    assert [(d.file, d.code) for d in found] == [("test/a.test.js", "failed")]
    assert "adds: AssertionError: expected 3 to be 4" in found[0].message
    assert suite_counts(text) == (2, 1)


def test_a_test_file_that_does_not_load_is_one_finding_on_it() -> None:
    found = parse_jest_json(_text("vitest-broken.json"), Path("/tmp/cap"), "vitest")
    assert [(d.file, d.code) for d in found] == [
        ("test/a.test.js", "failed"),
        ("test/broken.test.js", "suite-error"),
    ]
    assert "Parse failure" in found[1].message


def test_jest_json_failures_and_a_suite_that_failed_to_run() -> None:
    related = parse_jest_json(_text("jest.json"), Path("/tmp/capj"), "jest")
    assert [(d.file, d.code) for d in related] == [("src/a.test.js", "failed")]
    every = parse_jest_json(_text("jest-all.json"), Path("/tmp/capj"), "jest")
    assert [(d.file, d.code) for d in every] == [
        ("src/a.test.js", "failed"),
        ("src/b.test.js", "suite-error"),
    ]
    assert "Cannot find module './missing'" in every[1].message


def test_a_jest_failure_s_first_line_carries_expected_and_received_and_its_test_line() -> None:
    # tiny-invariant 1.3.3: a red verdict's finding read "expect(received).toEqual(expected)
    # // deep equality" (the lean report keeps a message's first line) with no line, where
    # cargo's says "left: 2; right: 4" at the assertion's line.
    failure = (
        "Error: \x1b[2mexpect(\x1b[22mreceived\x1b[2m).\x1b[22mtoEqual\x1b[2m(\x1b[22m"
        'expected\x1b[2m) // deep equality\x1b[22m\n\nExpected: "Invariant failed"\n'
        'Received: "Invariant failure"\n    at Object.<anonymous> '
        "(/tmp/ti/test/message-behaviour.spec.ts:9:23)\n"
        "    at Promise.then.completed (/tmp/ti/node_modules/jest-circus/build/utils.js:298:28)"
    )
    case = {"status": "failed", "fullName": "default message", "failureMessages": [failure]}
    suite = {"name": "/tmp/ti/test/message-behaviour.spec.ts", "assertionResults": [case]}
    report = {"testResults": [suite]}
    [found] = parse_jest_json(json.dumps(report), Path("/tmp/ti"), "jest")
    assert found.line == 9, found
    assert found.message.splitlines()[0] == (
        "test/message-behaviour.spec.ts > default message: Error: expect(received)."
        'toEqual(expected) // deep equality; Expected: "Invariant failed"; '
        'Received: "Invariant failure"'
    )


def test_not_a_report_has_no_counts() -> None:
    assert suite_counts("") is None
    assert suite_counts("[1, 2]") is None


def test_node_junit_failures_located_in_the_project(tmp_path: Path) -> None:
    report = tmp_path / "r.xml"
    report.write_text(_text("node-junit.xml").replace("/tmp/nt/", f"{tmp_path}/"), encoding="utf-8")
    parsed = parse_node_junit(report, tmp_path)
    assert parsed is not None
    found, cases = parsed
    assert cases == 2
    assert [(d.file, d.line, d.code) for d in found] == [("a.test.mjs", 3, "testCodeFailure")]
    assert found[0].message.startswith("adds: Expected values to be strictly equal")


def test_no_junit_report_is_none(tmp_path: Path) -> None:
    assert parse_node_junit(tmp_path / "absent.xml", tmp_path) is None


def test_fail_lines_of_a_test_script_with_colours() -> None:
    text = (
        "\x1b[31m FAIL \x1b[39m test/defu.test.ts > defu > should copy\n"
        " FAIL  src/index.test.ts\n"
        " FAIL  src/index.test.ts\n"
        " ✓ test/utils.test.ts (2 tests)\n"
    )
    found = parse_fail_lines(text, Path("/p"), "vitest")
    assert [(d.file, d.message) for d in found] == [
        ("test/defu.test.ts", "test/defu.test.ts > defu > should copy"),
        ("src/index.test.ts", "src/index.test.ts"),
    ]


def test_tap_not_ok_lines_are_findings_at_their_frame_with_what_differed() -> None:
    # tape 5.9's report of three failed assertions in qs 6.13's test suite.
    found = parse_tap(_text("tape.txt"), Path("/tmp/cap"), "tape")
    assert [(d.file, d.line, d.code) for d in found] == [
        ("test/stringify.js", 1017, "not ok"),
        ("test/stringify.js", 1018, "not ok"),
        ("test/stringify.js", 1019, "not ok"),
    ]
    assert found[0].message == (
        "RFC 1738 serialization: should be strictly equal: expected 'a=b+c', actual 'a=b-c'"
    )


def test_tap_todo_and_skip_are_not_failures_and_a_frame_outside_is_not_a_place() -> None:
    text = (
        "# parses\nnot ok 1 later # TODO\nnot ok 2 not here # SKIP\n"
        "not ok 3 - broken\n  ---\n    at: /elsewhere/x.js:3:1\n  ...\n"
    )
    found = parse_tap(text, Path("/tmp/cap"), "tap")
    assert [(d.file, d.line, d.message) for d in found] == [(None, None, "parses: broken")]
