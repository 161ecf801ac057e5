"""A client's regex gets one time budget per scan, shared by all its searches (with a linear
share of the text searched), on a fake clock: a hopeless pattern costs one budget however
many lines it meets, and a long scan with a sane pattern is never cut."""

from __future__ import annotations

import pytest

from agent_habitat.errors import UsageError
from agent_habitat.shell import output


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0


class _Engine:
    """Stands in for a compiled pattern: spends time on the fake clock, like the real one."""

    def __init__(self, clock: _Clock, seconds_per_char: float | None) -> None:
        self.clock = clock
        self.seconds_per_char = seconds_per_char  # None: hopeless, runs to its timeout
        self.timeouts: list[float] = []

    def search(self, text: str, *, timeout: float, concurrent: bool) -> None:
        self.timeouts.append(timeout)
        if self.seconds_per_char is None:
            self.clock.now += timeout
            raise TimeoutError
        self.clock.now += len(text) * self.seconds_per_char


def _pattern(
    monkeypatch: pytest.MonkeyPatch, seconds_per_char: float | None
) -> tuple[output.ClientPattern, _Engine, _Clock]:
    clock = _Clock()
    monkeypatch.setattr(output, "_now", lambda: clock.now)
    pattern = output.ClientPattern("(a|aa)+$", "grep")
    engine = _Engine(clock, seconds_per_char)
    pattern._compiled = pattern._lines = engine  # type: ignore[assignment]
    return pattern, engine, clock


def _search_each(pattern: output.ClientPattern, lines: list[str]) -> None:
    for line in lines:
        pattern.search(line)


def test_a_hopeless_pattern_costs_one_budget_not_one_per_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pattern, engine, clock = _pattern(monkeypatch, None)
    block = "\n".join(["a" * 30 + "!"] * 100)
    assert pattern.may_match_lines(block)  # undecided: the lines will say
    with pytest.raises(UsageError, match=r"argument `grep`.*took over 1 s"):
        _search_each(pattern, block.splitlines())
    # The block's search and one line's together: one budget and the text's linear share.
    assert len(engine.timeouts) == 2
    assert clock.now <= output.SEARCH_BUDGET_SECONDS + 2 * len(block) / 5_000_000


def test_the_next_trip_of_a_wait_gets_the_whole_budget_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pattern, engine, _ = _pattern(monkeypatch, None)
    with pytest.raises(UsageError):
        pattern.search("a" * 30 + "!")
    pattern.renew()
    with pytest.raises(UsageError):
        pattern.search("a" * 30 + "!")
    assert [round(t) for t in engine.timeouts] == [1, 1]


def test_a_long_scan_with_a_sane_pattern_is_not_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    # 10 M characters a second: a slow engine, yet faster than the budget's linear share.
    pattern, engine, clock = _pattern(monkeypatch, 1e-7)
    block = "x" * 64 * 1024
    for _ in range(2000):  # 128 MiB of output: 13 s of searching, never over budget
        pattern.may_match_lines(block)
        pattern.search(block)
    assert clock.now > 10 * output.SEARCH_BUDGET_SECONDS
    assert len(engine.timeouts) == 4000


class _Starved:
    """The engine's wall-clock timeout passes while the thread waits for a core: no CPU
    time spent (a loaded machine), then, if `then_found`, the search ends at once."""

    def __init__(self, then_found: bool) -> None:
        self.then_found = then_found
        self.timeouts: list[float] = []

    def search(self, text: str, *, timeout: float, concurrent: bool) -> str:
        self.timeouts.append(timeout)
        if len(self.timeouts) == 1 or not self.then_found:
            raise TimeoutError
        return text


def _starved_grep(
    monkeypatch: pytest.MonkeyPatch, *, then_found: bool
) -> tuple[output.ClientPattern, _Starved]:
    """`grep="^f"` over an engine that is starved of CPU, on a clock that never moves."""
    clock = _Clock()
    monkeypatch.setattr(output, "_now", lambda: clock.now)
    pattern = output.ClientPattern("^f", "grep")
    engine = _Starved(then_found)
    pattern._compiled = engine  # type: ignore[assignment]
    return pattern, engine


def test_a_search_that_waited_for_a_core_is_not_called_hopeless(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # At a load of 30, `'^f'` on two characters was refused as "took over 1 s": the budget
    # counted the wall, and the thread had waited for a core. It counts the thread's CPU now.
    pattern, engine = _starved_grep(monkeypatch, then_found=True)
    assert pattern.search("fx") == "fx"  # type: ignore[comparison-overlap]
    assert engine.timeouts[1] == 2 * engine.timeouts[0]  # the wall doubled, the CPU kept


def test_a_search_that_never_gets_a_core_is_still_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pattern, engine = _starved_grep(monkeypatch, then_found=False)
    with pytest.raises(UsageError, match=r"argument `grep`"):
        pattern.search("fx")
    assert len(engine.timeouts) == 1 + output._RETRIES
