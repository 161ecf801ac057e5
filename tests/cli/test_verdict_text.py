"""The verdict printed from the climb's JSON (the host's answer) says what the rich view of
the one-shot path says, line for line, and where the wait went."""

from __future__ import annotations

import io

from rich.console import Console

from agent_habitat.cli.ladder_view import render_result
from agent_habitat.cli.verdict_text import render_verdict
from agent_habitat.verify.models import Diagnostic, LadderResult, RungResult, Selection
from agent_habitat.verify.timing import timing_of


def _result() -> LadderResult:
    found = [
        Diagnostic(file="src/a.py", line=3, col=1, code="F401", message="`os` imported but unused"),
        Diagnostic(file="src/b.py", line=9, code="E711", message="old", preexisting=True),
    ]
    rungs = [
        RungResult(rung="diagnose.files", task="l1.diagnose.files", state="green", tool="ruff"),
        RungResult(
            rung="test.scoped",
            task="l1.test.scoped",
            state="red",
            tool="pytest",
            duration_s=1.25,
            reason="1 failed",
            diagnostics=found,
            baseline="HEAD abc",
            notes=["1 selected"],
            spool="/tmp/out",
        ),
    ]
    return LadderResult(
        id="l1",
        snapshot="s1",
        head=None,
        policy="standard",
        state="red",
        rungs=rungs,
        touched=["src/a.py"],
        selection=Selection(full=False, tests=["tests/t.py"], reasons=["tests/t.py imports a"]),
        duration_s=1.5,
        timing=timing_of(2.0, [0.0, 1.25], baseline_s=0.3),
    )


def test_the_plain_verdict_is_the_rich_views_lines() -> None:
    result = _result()
    rich_out, plain_out = io.StringIO(), io.StringIO()
    render_result(Console(file=rich_out, width=200), result)
    render_verdict(result.model_dump(mode="json"), plain_out)
    rich_lines = [line.rstrip() for line in rich_out.getvalue().splitlines()]
    assert plain_out.getvalue().splitlines() == rich_lines


def test_the_wait_is_said_and_adds_up() -> None:
    out = io.StringIO()
    render_verdict(_result().model_dump(mode="json"), out)
    last = out.getvalue().splitlines()[-1]
    assert last == "waited 2.00s = rungs 1.25s + snapshot+selection 0.45s + warm-up 0.30s"


def test_a_verdict_the_tree_moved_away_from_says_stale() -> None:
    out = io.StringIO()
    render_verdict(_result().model_dump(mode="json"), out, stale=["src/a.py"])
    assert "stale: src/a.py changed while it climbed; verify again" in out.getvalue()


def test_a_selection_longer_than_its_lines_says_how_many_more() -> None:
    # wcwidth 0.2.13: "selection: 16 test path(s)" over six reasons, the other ten unsaid.
    reasons = [f"tests/test_core.py::test_{n} ran wcwidth/wcwidth.py:_bisearch" for n in range(16)]
    tests = [r.split(" ")[0] for r in reasons]
    result = _result().model_copy(
        update={"selection": Selection(full=False, tests=tests, reasons=reasons)}
    )
    rich_out, plain_out = io.StringIO(), io.StringIO()
    render_result(Console(file=rich_out, width=200), result)
    render_verdict(result.model_dump(mode="json"), plain_out)
    rich_lines = [line.rstrip() for line in rich_out.getvalue().splitlines()]
    assert plain_out.getvalue().splitlines() == rich_lines
    assert rich_lines[rich_lines.index("selection: 16 test path(s)") + 7] == "    … 10 more"
