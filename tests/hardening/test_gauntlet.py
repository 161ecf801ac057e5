"""The gauntlet's short version (bench/gauntlet/gauntlet.py, seed 12): every figure that
must be 0 is.

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
    kills = outcome.figures["server kills"]
    assert kills["server kills survived"] == kills["server kills"] == 1
    assert outcome.figures["left running"]["said so (left_running)"] == 3
    assert outcome.figures["host kills"]["bridge recovered"] == 1
