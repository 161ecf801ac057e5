"""The selection line of a verdict says how many test paths ran and why; when it lists only
some of the reasons, it says how many it left out (wcwidth 0.2.13: "3 test path(s):" beside
two reasons read as if two files had been selected)."""

from __future__ import annotations

from agent_habitat.verify.models import LadderRequest, LadderResult, RungResult, Selection
from agent_habitat.verify.runner.epochs import VerifyEpoch
from agent_habitat.verify.runner.report import epoch_report


def _epoch(reasons: list[str]) -> VerifyEpoch:
    tests = [r.split(" ", 1)[0] for r in reasons]
    rung = RungResult(rung="test.scoped", task="v1.test.scoped", state="green", tool="pytest")
    result = LadderResult(
        id="v1",
        snapshot="s1",
        head=None,
        policy="standard",
        state="green",
        rungs=[rung],
        touched=["wcwidth/wcwidth.py"],
        selection=Selection(full=False, tests=tests, reasons=reasons),
        duration_s=1.0,
    )
    return VerifyEpoch(
        epoch=1,
        task="v1",
        state="green",
        snapshot="s1",
        request=LadderRequest(),
        queued_at=0.0,
        result=result,
    )


def test_a_selection_of_more_reasons_than_it_lists_says_how_many_more() -> None:
    reasons = [f"tests/test_{n}.py imports wcwidth" for n in ("core", "emojis", "ucslevel")]
    line = epoch_report(_epoch(reasons)).selection
    assert line is not None
    assert line.startswith("3 test path(s): tests/test_core.py imports wcwidth; ")
    assert line.endswith("; 1 more")


def test_long_reasons_are_cut_before_the_count_of_the_rest() -> None:
    reasons = [f"tests/test_{n}.py::test_x ran wcwidth/wcwidth.py:f " + "x" * 200 for n in range(9)]
    line = epoch_report(_epoch(reasons)).selection
    assert line is not None
    assert line.endswith("…; 7 more")
    assert len(line) <= 300


def test_the_rungs_note_lists_five_reasons_and_counts_the_rest() -> None:
    reasons = [f"tests/test_{n}.py::test_x ran wcwidth/wcwidth.py:f" for n in range(16)]
    selection = Selection(full=False, tests=[r.split(" ")[0] for r in reasons], reasons=reasons)
    assert selection.listed(5) == "; ".join(reasons[:5]) + "; 11 more"
    assert selection.listed(16) == "; ".join(reasons)


def test_a_selection_it_lists_whole_has_no_count() -> None:
    line = epoch_report(_epoch(["tests/test_core.py imports wcwidth"])).selection
    assert line == "1 test path(s): tests/test_core.py imports wcwidth"
