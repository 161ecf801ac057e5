"""The gauntlet's short version (bench/gauntlet/gauntlet.py, seed 12): every scenario ran,
each reported exactly its figures, and every figure that must be 0 is.

`make gauntlet` runs the long one; docs/reliability.md has its figures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import gauntlet  # bench/gauntlet/ (tests/conftest.py puts it on the path)

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.mark.timeout(600)
async def test_the_short_gauntlet_holds_every_zero_figure(tmp_path: Path) -> None:
    outcome = await gauntlet.run(gauntlet.Settings.short(seed=12), tmp_path)
    assert outcome.failures() == [], outcome.figures
    assert set(outcome.figures) == set(gauntlet.FIGURES) - {"verify host-kill"}
    assert outcome.figures["verify cancel"]["verify cancel: state"] == "cancelled"
    kills = outcome.figures["server kills"]
    assert kills["server kills survived"] == kills["server kills"] == 1
    assert outcome.figures["left running"]["said so (left_running)"] == 3
    assert outcome.figures["host kills"]["bridge recovered"] == 1


def test_a_missing_or_renamed_figure_fails_the_run() -> None:
    figures = {name: dict.fromkeys(keys, 0) for name, keys in gauntlet.FIGURES.items()}
    assert gauntlet.Outcome(figures, {}).failures() == []
    del figures["server kills"]["runs lost"]
    figures["fuzzed tools"]["unanswered calls"] = figures["fuzzed tools"].pop("unanswered")
    figures["new scenario"] = {}
    assert gauntlet.Outcome(figures, {}).failures() == [
        "fuzzed tools: unanswered missing",
        "fuzzed tools: unanswered calls not in FIGURES",
        "server kills: runs lost missing",
        "new scenario: a scenario FIGURES does not list",
    ]


def test_every_must_be_zero_figure_is_one_a_scenario_reports() -> None:
    reported = set().union(*gauntlet.FIGURES.values())
    assert set(gauntlet.MUST_BE_ZERO) <= reported
