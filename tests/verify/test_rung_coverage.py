"""A verdict of some rungs only (`verify_run(rung=[...])`) speaks for those rungs: it says
which, and it never reads as the whole ladder green. Real git snapshots, the ladder faked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.mcp_tools.wire import lean_dump
from agent_habitat.verify.models import LadderRequest
from agent_habitat.verify.runner.config import RunnerConfig
from agent_habitat.verify.runner.report import VerifyRunResult, VerifyStatusResult, epoch_report
from agent_habitat.verify.runner.runner import VerifyRunner
from agent_habitat.verify.runner.text import epoch_summary, render_epoch

from .fake_ladder import FakeLadder

pytestmark = pytest.mark.anyio


@pytest.fixture
def ladder() -> FakeLadder:
    return FakeLadder()


@pytest.fixture
async def runner(tmp_path: Path, ladder: FakeLadder) -> AsyncIterator[VerifyRunner]:
    root = build_sample(tmp_path / "calc")
    text = root / "src/calc/text.py"
    text.write_text(text.read_text(encoding="utf-8") + "X = 1\n", encoding="utf-8")
    bus = InMemoryEventBus(str(root))
    config = RunnerConfig(coalesce_seconds=0)
    async with VerifyRunner.open(root, bus=bus, config=config, ladder=ladder, watch=False) as r:
        yield r


async def test_a_test_scoped_run_after_a_red_ladder_is_not_green_and_names_its_rungs(
    runner: VerifyRunner, ladder: FakeLadder
) -> None:
    ladder.states = {"diagnose.files": "red"}
    await runner.request(LadderRequest(), wait=True)
    ladder.states = {}
    await runner.request(LadderRequest(rungs=["test.scoped"]), wait=True)
    status = await runner.status()
    assert status.epoch is not None
    assert status.epoch.state == "green"  # what the rung it ran found
    assert not status.green  # but the code is not known green: diagnose.files did not run
    report = epoch_report(status.epoch)
    assert not report.green
    assert report.covers == ["test.scoped"]
    summary = epoch_summary(report)
    assert "test.scoped only; diagnose.files, compile.project not run" in summary
    assert "green=false" in summary
    verdict = render_epoch(report).splitlines()[0]
    assert "green=false" in verdict
    assert "rungs=test.scoped" in verdict
    assert "policy=" not in verdict
    wire = lean_dump(
        VerifyStatusResult(green=status.green, summary=summary, stale=False, epoch=report)
    )
    assert wire["green"] is False
    assert wire["epoch"]["covers"] == ["test.scoped"]
    assert wire["summary"] == summary  # the words, beside state green and green false


async def test_a_lean_verify_run_of_one_rung_says_what_it_left_out(
    runner: VerifyRunner, ladder: FakeLadder
) -> None:
    ticket = await runner.request(LadderRequest(rungs=["test.scoped"]), wait=True)
    assert ticket.result is not None
    report = epoch_report(ticket.result)
    result = VerifyRunResult(
        task=ticket.task,
        epoch=ticket.epoch,
        snapshot=ticket.snapshot,
        state=report.state,
        green=report.green,
        summary=epoch_summary(report),
        result=report,
    )
    wire = lean_dump(result)
    assert wire["state"] == "green"
    assert wire["green"] is False
    assert "result" not in wire  # a verdict, as a green one is: the rest is verify_status's
    assert "test.scoped only; diagnose.files, compile.project not run" in wire["summary"]


async def test_a_run_of_every_rung_of_its_policy_is_the_ladder_s_verdict(
    runner: VerifyRunner,
) -> None:
    rungs = ["diagnose.files", "compile.project", "test.scoped"]
    await runner.request(LadderRequest(rungs=rungs), wait=True)  # type: ignore[arg-type]
    status = await runner.status()
    assert status.green
    assert status.epoch is not None
    assert epoch_report(status.epoch).covers == []
