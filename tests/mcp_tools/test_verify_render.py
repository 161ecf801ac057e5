"""The verify results as text: the verdict first, never green when stale, within 4 KiB."""

from __future__ import annotations

from agent_habitat.mcp_tools.render import render
from agent_habitat.verify.runner.report import (
    DiagnosticLine,
    EpochReport,
    RungReport,
    VerifyRunResult,
    VerifyStatusResult,
)
from agent_habitat.verify.runner.text import TEXT_BUDGET


def _epoch(**changes: object) -> EpochReport:
    base = EpochReport(
        epoch=3,
        task="v1-abc",
        state="green",
        green=True,
        verified_state="green",
        snapshot="s1",
        policy="standard",
        rungs=[RungReport(rung="diagnose.files", task="v1-abc.diagnose.files", state="green")],
        touched=["src/a.py"],
        touched_count=1,
    )
    return base.model_copy(update=changes)


def test_a_stale_epoch_reads_stale_and_not_green_in_its_first_line() -> None:
    stale = _epoch(state="stale", green=False, stale=True, changed=["src/a.py"], changed_count=1)
    status = VerifyStatusResult(green=False, summary="", stale=True, epoch=stale)
    lines = render(status).splitlines()
    assert lines[0].startswith("state=stale green=false")
    assert lines[1].startswith("stale: ")
    assert "src/a.py changed since: not verified now" in lines[1]
    assert "green=true" not in render(status)


def test_a_red_result_with_many_findings_stays_within_the_budget_and_says_what_it_left_out() -> (
    None
):
    findings = [
        DiagnosticLine(file=f"src/m{i}.py", line=i, code="F821", message="x" * 250)
        for i in range(10)
    ]
    rung = RungReport(
        rung="diagnose.files",
        task="v1-abc.diagnose.files",
        state="red",
        reason="10 new findings",
        new_findings=400,
        preexisting_findings=7,
        diagnostics=findings,
        notes=["n" * 300] * 3,
        output_tail="\n".join("y" * 300 for _ in range(15)),
        command_line="ruff check " + "z" * 400,
        spool="/state/spool/v1.log",
    )
    epoch = _epoch(state="red", green=False, verified_state="red", rungs=[rung] * 4)
    result = VerifyRunResult(
        task="v1-abc", epoch=3, snapshot="s1", state="red", green=False, summary="", result=epoch
    )
    body = render(result)
    assert len(body.encode("utf-8")) <= TEXT_BUDGET
    assert body.startswith("state=red green=false")
    assert "src/m0.py:0 F821" in body
    assert "more lines left out" in body.splitlines()[-1]


def test_a_queued_ticket_says_how_to_follow_it() -> None:
    ticket = VerifyRunResult(
        task="v2-def", epoch=4, snapshot="s2", state="queued", green=False, summary=""
    )
    body = render(ticket)
    assert body.startswith("state=queued green=false task=v2-def")
    assert "verify_status(task='v2-def')" in body


def test_the_details_follow_ladder_order_a_skipped_rung_before_a_later_red_one() -> None:
    rungs = [
        RungReport(rung="diagnose.files", task="v1-abc.diagnose.files", state="green"),
        RungReport(
            rung="compile.project",
            task="v1-abc.compile.project",
            state="skipped",
            reason="no type checker configured",
        ),
        RungReport(
            rung="test.scoped",
            task="v1-abc.test.scoped",
            state="red",
            reason="1 test failure(s), first tests/test_a.py::test_x",
        ),
    ]
    red = _epoch(state="red", green=False, verified_state="red", rungs=rungs)
    text = render(VerifyStatusResult(green=False, summary="", stale=False, epoch=red))
    skipped = text.index("compile.project skipped: no type checker configured")
    failed = text.index("\ntest.scoped red: ")  # its details, not the summary line
    assert skipped < failed
