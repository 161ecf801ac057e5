"""`habitat verify` on an unchanged tree is read by a person at a terminal: the hint names the
flags to type (`--files`, `--filter`, `--policy ci_parity`), not `verify_run`'s fields. A
new user's trial read "name files or a filter, or use the ci_parity policy" (issue 25); the
agent's answer keeps the field names."""

from __future__ import annotations

import io

from rich.console import Console

from agent_habitat.cli.ladder_view import render_result
from agent_habitat.cli.verdict_text import render_verdict
from agent_habitat.mcp_tools.render import render
from agent_habitat.verify.models import LadderResult, RungResult
from agent_habitat.verify.rungs.context import NOTHING_CHANGED

_HINT = "(name files or a filter, or use the ci_parity policy for the full suite)"


def _unchanged() -> LadderResult:
    skipped = RungResult(
        rung="test.scoped", task="l1.test.scoped", state="skipped", reason=NOTHING_CHANGED
    )
    return LadderResult(
        id="l1",
        snapshot="s1",
        head="0123456789abcdef",
        policy="standard",
        state="nothing_to_verify",
        rungs=[skipped],
        touched=[],
        reason=f"the tree is unchanged since HEAD 0123456789ab: nothing to verify {_HINT}",
        duration_s=0.2,
    )


def test_the_verdict_names_the_flags_to_type() -> None:
    out = io.StringIO()
    render_verdict(_unchanged().model_dump(mode="json"), out)
    text = out.getvalue()
    for flag in ("--files", "--filter", "--policy ci_parity"):
        assert flag in text
    assert "--rung" in text  # the skipped rung's hint too
    assert "name files or a filter" not in text
    assert "the ci_parity policy" not in text


def test_the_rich_view_says_the_same_words() -> None:
    result = _unchanged()
    rich_out, plain_out = io.StringIO(), io.StringIO()
    render_result(Console(file=rich_out, width=200), result)
    render_verdict(result.model_dump(mode="json"), plain_out)
    rich_lines = [line.rstrip() for line in rich_out.getvalue().splitlines()]
    assert plain_out.getvalue().splitlines() == rich_lines


def test_the_agent_still_reads_the_fields_of_verify_run() -> None:
    assert _HINT in render(_unchanged())
