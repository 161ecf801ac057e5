"""An epoch lists its rungs as the ladder climbed them, the ones not reached after."""

from __future__ import annotations

from agent_habitat.verify.models import LadderRequest, LadderResult, RungName, RungResult
from agent_habitat.verify.runner.epochs import Epoch


def _result(rung: RungName, state: str = "green") -> RungResult:
    return RungResult.model_validate({"rung": rung, "task": f"v1.{rung}", "state": state})


def test_a_rung_the_plan_did_not_have_is_listed_where_it_ran() -> None:
    epoch = Epoch(1, "v1", LadderRequest())
    epoch.plan(["diagnose.files", "compile.project", "test.scoped"])
    # Outdated generated sources: build.affected runs right after diagnose.files.
    climbed = [_result("diagnose.files"), _result("build.affected")]
    for result in climbed:
        epoch.rung_finished(result)
    assert list(epoch.rungs) == [
        "diagnose.files",
        "build.affected",
        "compile.project",
        "test.scoped",
    ]
    skipped = [_result("compile.project", "skipped"), _result("test.scoped", "red")]
    for result in skipped:
        epoch.rung_finished(result)
    epoch.finish(
        LadderResult.model_validate(
            {
                "id": "v1",
                "snapshot": "s",
                "head": None,
                "touched": [],
                "policy": "standard",
                "state": "red",
                "rungs": [r.model_dump() for r in [*climbed, *skipped]],
            }
        )
    )
    assert [s.rung for s in epoch.view().rungs] == [
        "diagnose.files",
        "build.affected",
        "compile.project",
        "test.scoped",
    ]
