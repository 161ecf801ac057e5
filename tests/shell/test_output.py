from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_habitat.proc.spool import Hole, Spool, split_lines
from agent_habitat.proc.spool_keeper import REASON_RUN
from agent_habitat.shell import output
from agent_habitat.shell.output import clean_text, compile_pattern, read_capped, read_lines_window


def test_clean_text_strips_colour_and_osc_sequences() -> None:
    raw = b"\x1b[31mred\x1b[0m \x1b]0;title\x07plain \x1b[2Kdone"
    assert clean_text(raw) == "red plain done"


def test_clean_text_keeps_only_the_final_state_of_a_progress_line() -> None:
    raw = b"downloading 10%\rdownloading 50%\rdownloading 100%\nnext line\r\n"
    assert clean_text(raw) == "downloading 100%\nnext line\n"


def test_carriage_return_overwrites_like_a_terminal() -> None:
    assert clean_text(b"hello world\rHELLO") == "HELLO world"


def test_clean_text_replaces_invalid_utf8_instead_of_failing() -> None:
    assert clean_text(b"ok \xff\xfe end") == "ok \ufffd\ufffd end"


def test_read_capped_returns_everything_under_the_cap(tmp_path: Path) -> None:
    spool = tmp_path / "out"
    spool.write_bytes(b"hello\n")
    capped = read_capped(spool, 100)
    assert (capped.text, capped.omitted_bytes, capped.total_bytes) == ("hello\n", 0, 6)


def test_read_capped_keeps_head_and_tail_and_counts_the_rest(tmp_path: Path) -> None:
    spool = tmp_path / "out"
    spool.write_bytes(b"H" * 500 + b"M" * 10_000 + b"T" * 500)
    capped = read_capped(spool, 1000)
    assert capped.text.startswith("H" * 500)
    assert capped.text.endswith("T" * 500)
    assert capped.omitted_bytes == 10_000
    assert "10000 bytes omitted" in capped.text


def test_read_capped_cuts_head_and_tail_at_a_nearby_line_boundary(tmp_path: Path) -> None:
    spool = tmp_path / "out"
    lines = [f"line {i:04d} ".ljust(39, "x") + "\n" for i in range(1000)]  # 40 bytes each
    spool.write_bytes("".join(lines).encode())
    capped = read_capped(spool, 1010)
    head = capped.text[: capped.text.index("\n… [")]
    tail = capped.text.split("] …\n", 1)[1]
    assert head == "".join(lines[: len(head) // 40])
    assert tail == "".join(lines[-(len(tail) // 40) :])
    assert capped.omitted_bytes + len(head) + len(tail) == 40_000


def test_read_capped_cuts_mid_line_when_no_boundary_is_near(tmp_path: Path) -> None:
    spool = tmp_path / "out"
    spool.write_bytes(b"H" * 5000 + b"\n" + b"T" * 5000)
    capped = read_capped(spool, 1000)
    assert capped.text.startswith("H" * 500)
    assert capped.text.endswith("T" * 500)


def test_read_capped_since_a_cursor_returns_only_newer_bytes(tmp_path: Path) -> None:
    spool = tmp_path / "out"
    spool.write_bytes(b"old\nnew\n")
    assert read_capped(spool, 100, since=4).text == "new\n"
    assert read_capped(spool, 100, since=99).text == ""


def test_read_capped_of_a_missing_spool_is_empty(tmp_path: Path) -> None:
    assert read_capped(tmp_path / "absent", 100).total_bytes == 0


def test_lines_window_head_and_tail(tmp_path: Path) -> None:
    spool = tmp_path / "out"
    spool.write_text("".join(f"line {i}\n" for i in range(1, 101)), encoding="utf-8")
    head = read_lines_window(spool, 10_000, head_lines=2)
    assert head.text == "line 1\nline 2\n"
    tail = read_lines_window(spool, 10_000, tail_lines=2)
    assert tail.text == "line 99\nline 100\n"
    both = read_lines_window(spool, 10_000, head_lines=1, tail_lines=1)
    assert both.text == "line 1\nline 100\n"
    assert both.omitted_bytes > 0


def test_lines_window_grep_counts_only_matching_lines(tmp_path: Path) -> None:
    spool = tmp_path / "out"
    spool.write_text("ok 1\nERROR a\nok 2\nERROR b\nERROR c\n", encoding="utf-8")
    found = read_lines_window(spool, 10_000, grep=compile_pattern("ERROR", "grep"), tail_lines=2)
    assert found.text == "ERROR b\nERROR c\n"


def test_a_huge_single_line_is_read_in_pieces(tmp_path: Path) -> None:
    spool = tmp_path / "out"
    spool.write_bytes(b"x" * 5_000_000 + b"\nlast\n")
    tail = read_lines_window(spool, 1000, tail_lines=1)
    assert tail.text == "last\n"
    head = read_lines_window(spool, 1000, head_lines=1)
    assert len(head.text) <= 64 * 1024


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes each read of a spool asks for (the seam: `Spool._read_kept`)."""
    asked: list[int] = []
    original = Spool._read_kept

    def counting(self: Spool, start: int, length: int, hole: Hole | None) -> bytes:
        asked.append(length)
        return original(self, start, length, hole)

    monkeypatch.setattr(Spool, "_read_kept", counting)
    return asked


def test_head_lines_reads_the_head_only_and_tail_lines_the_end_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool = tmp_path / "out"
    spool.write_bytes(b"first\n" + b"y\n" * 4_000_000 + b"last\n")
    asked = _count_reads(monkeypatch)
    head = read_lines_window(spool, 10_000, head_lines=1)
    assert head.text == "first\n"
    assert sum(asked) <= 512 * 1024  # of 8 MB
    asked.clear()
    tail = read_lines_window(spool, 10_000, tail_lines=2)
    assert tail.text == "y\nlast\n"
    assert sum(asked) <= 512 * 1024
    assert tail.omitted_bytes == tail.total_bytes - len("y\nlast\n") == 8_000_004
    asked.clear()
    grep = read_lines_window(spool, 10_000, tail_lines=1, grep=compile_pattern("^f", "grep"))
    assert grep.text == "first\n"  # found from the end, as far back as it had to go


# Derandomized and without a deadline: the same examples every run, however loaded the box.
@settings(
    derandomize=True, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.binary(max_size=200).map(lambda b: b.replace(b"a", b"\n")), st.integers(1, 9))
def test_lines_found_from_the_end_are_the_lines_split_from_the_start(
    block: bytes, max_line_bytes: int
) -> None:
    backward = list(output._lines_backward(100, block, max_line_bytes))
    assert backward == list(reversed(list(split_lines(100, block, max_line_bytes))))


@pytest.mark.finding("under-load")
def test_a_tail_of_a_loud_spool_looks_at_the_lines_it_shows_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 23 ("Under load"): a tail split the whole 256 KiB block (131,072 lines of `yes`)
    # on every call, seconds a call with 8 loud tabs and 20 callers.
    spool = tmp_path / "out"
    spool.write_bytes(b"y\n" * 1_000_000)
    seen: list[int] = []
    original = output._lines_backward

    def counting(offset: int, block: bytes, max_line_bytes: int) -> Iterator[tuple[int, bytes]]:
        for line in original(offset, block, max_line_bytes):
            seen.append(line[0])
            yield line

    monkeypatch.setattr(output, "_lines_backward", counting)
    tail = read_lines_window(spool, 10_000, tail_lines=20)
    assert tail.text == "y\n" * 20
    assert len(seen) <= 21


def test_line_windows_skip_the_freed_middle_and_count_it(tmp_path: Path) -> None:
    spool = tmp_path / "out"
    spool.write_bytes(b"a\n" * 10_000 + b"\0" * 8192 + b"b\n" * 10_000)
    Path(f"{spool}.hole").write_text(f"20000 28192 {REASON_RUN}\n", encoding="ascii")
    both = read_lines_window(spool, 100_000, head_lines=1, tail_lines=1)
    assert (both.text, both.omitted_bytes) == ("a\nb\n", 48_192 - 4)
    grep = read_lines_window(spool, 100_000, grep=compile_pattern("\0", "grep"))
    assert (grep.text, grep.omitted_bytes) == ("", 48_192)
    capped = read_capped(spool, 100_000)
    assert capped.omitted_bytes == 8192
    assert f"\n… [8192 bytes omitted; not kept: {REASON_RUN}] …\nb\n" in capped.text
    assert "\0" not in capped.text
