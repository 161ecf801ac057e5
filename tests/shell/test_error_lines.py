"""The error-looking lines of a failed run's left-out output (shell/error_lines.py)."""

from __future__ import annotations

from pathlib import Path

from agent_habitat.proc.spool import Spool
from agent_habitat.shell import error_lines
from agent_habitat.shell.error_lines import LIMIT, ErrorLines, failed, find, in_spool


def test_finds_compiler_test_runner_and_interpreter_failures() -> None:
    text = (
        "E   assert 1 == 2\n"
        "compiling a.c ... ok\n"
        "src/b.c:3:1: error: expected ';'\n"
        "build: 0 errors, no failures\n"
        "FAILED tests/test_x.py::test_y - AssertionError\n"
        "Traceback (most recent call last):\n"
        "ld: undefined reference to `main'\n"
        "all good\n"
    )
    assert find(text).lines == [
        "E   assert 1 == 2",
        "src/b.c:3:1: error: expected ';'",
        "FAILED tests/test_x.py::test_y - AssertionError",
        "Traceback (most recent call last):",
        "ld: undefined reference to `main'",
    ]


def test_words_inside_other_words_are_not_errors() -> None:
    assert find("terrorist\nfailover ok\nerrored?\n").lines == []


def test_at_most_the_limit_and_the_rest_counted() -> None:
    found = find("".join(f"error {i}\n" for i in range(LIMIT + 5)))
    assert found.lines == [f"error {i}" for i in range(LIMIT)]
    assert found.more == 5


def test_a_long_line_is_cut() -> None:
    (line,) = find("error: " + "x" * 5000 + "\n").lines
    assert len(line) == error_lines.LINE_CHARS + 1
    assert line.endswith("…")


def test_then_keeps_order_and_counts_what_does_not_fit() -> None:
    first = ErrorLines([f"a{i}" for i in range(6)])
    second = ErrorLines([f"b{i}" for i in range(6)], more=2)
    both = first.then(second)
    assert both.lines == [*first.lines, *second.lines[:4]]
    assert both.more == 4


def test_only_a_run_that_ended_badly_failed() -> None:
    assert not failed("exited", 0, None, False)
    assert not failed("running", None, None, False)
    assert failed("exited", 2, None, False)
    assert failed("killed", None, 9, False)
    assert failed("timed_out", None, 15, True)
    assert failed("lost", None, None, False)


def test_in_spool_reads_the_range_across_chunks(tmp_path: Path) -> None:
    path = tmp_path / "output"
    filler = b"compiling module ... ok\n" * 60_000  # > 1 MiB: more than one chunk
    path.write_bytes(filler + b"x.c:1: error: first\n" + filler + b"FATAL: second\n" + filler)
    found = in_spool(Spool(path), 0, path.stat().st_size, ())
    assert found.lines == ["x.c:1: error: first", "FATAL: second"]
    # Outside the range: not there.
    assert in_spool(Spool(path), 0, len(filler), ()).lines == []


def test_in_spool_shows_secrets_as_stars(tmp_path: Path) -> None:
    path = tmp_path / "output"
    path.write_bytes(b"error: token hunter2 refused\n")
    assert in_spool(Spool(path), 0, 100, ("hunter2",)).lines == ["error: token *** refused"]
