"""cargo's JSON messages and libtest's report, parsed from outputs captured from real runs
of cargo 1.95 on a small crate (rust_outputs/, made under /tmp/rs/demo)."""

from __future__ import annotations

from pathlib import Path

from agent_habitat.verify.toolchains.rust.messages import (
    BUILD_SCRIPT,
    compiler_messages,
    libtest_report,
)

OUTPUTS = Path(__file__).parent / "rust_outputs"
ROOT = Path("/tmp/rs/demo")


def _read(name: str) -> str:
    return (OUTPUTS / name).read_text(encoding="utf-8")


def test_clippy_errors_and_warnings_at_their_primary_span_once_each() -> None:
    found = compiler_messages(_read("clippy_error.txt"), ROOT, tool="cargo clippy")
    errors = [d for d in found if d.severity == "error"]
    warnings = [d for d in found if d.severity == "warning"]
    assert [(d.file, d.line, d.code) for d in errors] == [("src/math.rs", 8, "E0308")]
    assert errors[0].message == "mismatched types: expected `u64`, found `&str`"
    assert [(d.file, d.line, d.code) for d in warnings] == [("src/math.rs", 2, "unused_variables")]
    assert {d.source for d in found} == {"cargo clippy"}
    # The compiler's own summaries ("aborting due to …") are not findings.
    assert not any("aborting" in d.message for d in found)


def test_a_type_mismatch_says_what_was_expected_and_found_as_rustc_does() -> None:
    # cargo check of /tmp/rs/e0308 (type_mismatch.txt): rustc's primary label under the
    # code (`^^^ expected `u32`, found `&str``) joins the message; a label that says
    # anything else (an unused variable's) does not.
    found = compiler_messages(_read("type_mismatch.txt"), Path("/tmp/rs/e0308"), tool="cargo")
    assert [(d.line, d.code, d.message) for d in found] == [
        (10, "E0053", "method `f` has an incompatible type for trait: expected `u32`, found `u64`"),
        (2, "E0308", "mismatched types: expected `u32`, found `&str`"),
        (6, "E0308", "mismatched types: expected `Option<u8>`, found `usize`"),
        (11, "E0308", "`match` arms have incompatible types: expected `u8`, found `&str`"),
        (10, "unused_variables", "unused variable: `x`"),
        (12, "unused_variables", "unused variable: `v`"),
    ]


def test_failed_unit_integration_and_doc_tests_each_a_finding_where_they_failed() -> None:
    report = libtest_report(_read("test_failures.txt"), ROOT)
    where = [(d.file, d.line, d.message.split(": ")[0]) for d in report.failures]
    assert where == [
        ("src/math.rs", 6, "math::tests::doubles"),
        ("tests/api.rs", 3, "adds_big"),
        ("src/lib.rs", 9, "src/lib.rs - doc (line 9)"),
    ]
    assert "left: 4" in report.failures[0].message
    assert "one and one" in report.failures[1].message
    assert (report.passed, report.failed, report.signal) == (2, 3, None)
    assert report.ran_binaries == 3
    # cargo's `to rerun pass` arguments name each failed test's target (HEAD's run uses them).
    assert report.reruns == {
        "math::tests::doubles": "--lib",
        "adds_big": "--test api",
        "src/lib.rs - doc (line 9)": "--doc",
    }


def test_a_doc_test_failed_in_its_own_lines_is_found_at_the_doc_test() -> None:
    # humantime 2.2.0 (edition 2021), cargo 1.95: rustdoc names the doc test's panic by the
    # source file and the line in the snippet as it compiled it ("src/duration.rs:9:1" for
    # the assertion on line 222), which pointed at the file's imports; the doc test is at
    # the line its name gives.
    report = libtest_report(_read("test_doc_failure_2021.txt"), Path("/tmp/rs/humantime"))
    (d,) = report.failures
    assert (d.file, d.line) == ("src/duration.rs", 217)
    assert d.message.startswith("src/duration.rs - duration::parse_duration (line 217): ")
    assert "left: Ok(3.2ms)" in d.message


def test_a_test_binary_killed_by_a_signal_is_named_with_its_signal() -> None:
    report = libtest_report(_read("test_segv.txt"), ROOT)
    assert report.signal == "SIGSEGV"
    assert report.died == "src/lib.rs"
    died = report.failures[0]
    assert (died.code, died.file) == ("SIGSEGV", "src/lib.rs")
    assert "killed by SIGSEGV" in died.message
    # The other binaries still ran (--no-fail-fast) and their failures are listed too.
    assert [d.message.split(": ")[0] for d in report.failures[1:]] == [
        "adds_big",
        "src/lib.rs - doc (line 9)",
    ]


def test_a_binary_that_exits_without_a_test_report_is_a_failure() -> None:
    text = (
        "     Running tests/api.rs (target/debug/deps/api-0de6)\n"
        "error: test failed, to rerun pass `--test api`\n\nCaused by:\n"
        "  process didn't exit successfully: `/x/target/debug/deps/api-0de6` (exit status: 3)\n"
    )
    report = libtest_report(text, ROOT)
    assert [(d.file, d.code) for d in report.failures] == [("tests/api.rs", "exit 3")]
    assert report.signal is None


def test_a_harness_that_prints_no_stdout_sections_has_its_failed_lines_as_findings() -> None:
    # servo/rust-url's data-url wpt target (harness = false, the `tester` crate), cargo 1.95:
    # its failures are only `test NAME ... FAILED` lines, a panic on stderr for some.
    report = libtest_report(_read("test_tester_harness.txt"), Path("/tmp/rustgo/url"))
    found = [(d.file, d.line, d.message) for d in report.failures]
    assert found == [
        ("tests/wpt.rs", None, 'base64 "AA/" failed'),
        (
            "data-url/tests/wpt.rs",
            68,
            'base64 "//A": assertion `left == right` failed; left: [255, 248]; right: [255, 240]',
        ),
    ]
    assert (report.passed, report.failed) == (5, 2)


def test_a_harness_false_target_that_panics_in_main_is_a_failure_at_its_panic() -> None:
    # The shape of servo/rust-url's url wpt target (harness = false) when a mutation of
    # host.rs made its main panic (exit 101): cargo says only "test failed, to rerun pass",
    # no "Caused by" (the panic's own text here is written for the test).
    report = libtest_report(_read("test_harness_false_panic.txt"), Path("/tmp/rustgo/url"))
    found = [(d.file, d.line, d.code) for d in report.failures]
    assert found == [("url/src/host.rs", 481, "test failed")]
    assert "tests/wpt.rs exited 101" in report.failures[0].message
    assert "index out of bounds" in report.failures[0].message


def test_a_warning_the_test_build_denies_is_an_error_beside_the_warning() -> None:
    # `#![cfg_attr(test, deny(warnings))]`: the lib warns, the lib's test build fails there.
    def message(level: str) -> str:
        span = '{"file_name":"src/lib.rs","line_start":2,"column_start":13,"is_primary":true}'
        return (
            '{"reason":"compiler-message","message":{"level":"' + level + '","message":'
            '"unused variable: `x`","code":{"code":"unused_variables"},"spans":[' + span + "]}}"
        )

    found = compiler_messages(message("warning") + "\n" + message("error"), ROOT, tool="rustc")
    assert [d.severity for d in found] == ["warning", "error"]


def test_a_panicking_build_script_is_a_build_failure_at_its_panic_not_a_test_binary() -> None:
    # cargo test of /tmp/rs/bs (a workspace; basis/build.rs wrote a line, then panicked;
    # RUST_BACKTRACE=1): no test ran, no test binary exited 101.
    text = _read("build_script_panic.txt")
    found = compiler_messages(text, Path("/tmp/rs/bs"), tool="rustc")
    assert [(d.file, d.line, d.code, d.severity, d.source) for d in found] == [
        ("basis/build.rs", 4, BUILD_SCRIPT, "error", "rustc")
    ]
    # The panic's own message, not what the script wrote before it nor the backtrace; the
    # package without its folder (HEAD's export is elsewhere).
    assert found[0].message == (
        "build script of `basis v0.1.0` failed (exit 101): no libfoo on this machine"
    )
    report = libtest_report(text, Path("/tmp/rs/bs"))
    assert (report.failures, report.passed, report.failed, report.ran_binaries) == ([], 0, 0, 0)


def test_a_build_script_that_exits_is_found_at_the_file_its_manifest_names() -> None:
    # cargo clippy of /tmp/rs/bs with `build = "tools/gen.rs"`, which exits 2 without a panic.
    found = compiler_messages(
        _read("build_script_exit.txt"), Path("/tmp/rs/bs"), tool="cargo clippy"
    )
    assert [(d.file, d.line, d.code, d.message) for d in found] == [
        (
            "basis/tools/gen.rs",
            None,
            BUILD_SCRIPT,
            "build script of `basis v0.1.0` failed (exit 2): libfoo not found",
        )
    ]
