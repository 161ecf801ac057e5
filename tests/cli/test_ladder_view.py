"""The verify text for pipes and agents: whole lines, never wrapped at 80 columns."""

from __future__ import annotations

import io
import re

from rich.console import Console

from agent_habitat.cli.ladder_view import render_result
from agent_habitat.verify.models import LadderResult, RungResult

_LONG = "src/" + "/".join(["a_rather_long_package_name"] * 6) + "/module.py"


def _result() -> LadderResult:
    rung = RungResult(
        rung="diagnose.files",
        task="l1.diagnose.files",
        state="red",
        spool="/tmp/" + "x" * 90 + "/output",
    )
    return LadderResult(
        id="l1",
        snapshot="s1",
        head=None,
        policy="standard",
        state="red",
        rungs=[rung],
        touched=[_LONG],
        reason="a reason long enough to need more than eighty columns when it is printed out whole",
    )


def test_not_a_terminal_lines_are_not_wrapped() -> None:
    out = io.StringIO()
    render_result(Console(file=out, width=80), _result())
    text = out.getvalue()
    assert _LONG in text
    assert "x" * 90 in text
    assert max(len(line) for line in text.splitlines()) > 80


def test_a_terminal_wraps_at_its_width() -> None:
    out = io.StringIO()
    render_result(Console(file=out, width=80, force_terminal=True, no_color=True), _result())
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    assert max(len(line) for line in plain.splitlines()) <= 80


def test_a_selection_is_shown_only_when_a_test_rung_ran() -> None:
    from agent_habitat.verify.models import Selection

    stopped = _result().model_copy(
        update={"selection": Selection(full=False, tests=["tests/t.py"])}
    )
    out = io.StringIO()
    render_result(Console(file=out), stopped)
    assert "selection" not in out.getvalue()
    ran = RungResult(rung="test.scoped", task="l1.test.scoped", state="green")
    climbed = stopped.model_copy(update={"rungs": [ran]})
    out = io.StringIO()
    render_result(Console(file=out), climbed)
    assert "selection: 1 test path(s)" in out.getvalue()
