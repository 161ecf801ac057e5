"""A test file deleted since the recording is no reason for anything: the trial's selection
note read "3 by the import graph (…; tests/test_later.py changed since the recording)" after
tests/test_later.py was gone. Real git, real pytest with the recorder plugin."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, LadderResult, run_ladder

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

LATER = """from calc.text import shout


def test_later() -> None:
    assert shout("a") == "A!"
"""


async def _scoped(root: Path) -> LadderResult:
    return await run_ladder(root, LadderRequest(rungs=["test.scoped"]), bus=InMemoryEventBus("t"))


async def test_a_deleted_test_file_is_named_nowhere_in_the_next_selection(tmp_path: Path) -> None:
    root = build_sample(tmp_path / "calc")
    text = root / "src/calc/text.py"
    text.write_text(text.read_text(encoding="utf-8") + "Y = 5\n", encoding="utf-8")
    later = root / "tests/test_later.py"
    later.write_text(LATER, encoding="utf-8")
    first = await _scoped(root)
    assert first.state == "green", first
    assert first.selection is not None
    assert "tests/test_later.py" in first.selection.tests  # it ran, and was recorded
    later.unlink()
    second = await _scoped(root)
    assert second.state == "green", second
    assert second.selection is not None
    (rung,) = second.rungs
    said = [*second.selection.tests, *second.selection.reasons, *rung.notes]
    assert not [line for line in said if "test_later" in line], said
