"""Green means something was checked, for Python tests: a pytest run whose every selected
test was skipped checked nothing, and the rung says so instead of passing green; a run that
passed says how many tests it ran, not how many paths or filters it was given. Real pytest.

Found on humanize 4.11.0 (its sdist, through `habitat mcp`): a new test file whose one test
is `@pytest.mark.skip` made test.scoped green ("pytest 1 selected"), and `verify_run(rung=
"test.scoped", filter="-k intcomma")` answered "pytest 1 selected" for 35 tests that passed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, run_ladder, stop_type_daemon
from agent_habitat.verify.models import LadderResult
from agent_habitat.verify.runner.report import EpochReport, RungReport
from agent_habitat.verify.runner.text import checked
from git_tree import IGNORED, commit_tree, ladder_pyproject
from git_tree import write as _write

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CORE = "def double(x: int) -> int:\n    return x * 2\n"
TESTS = """from shop.core import double


def test_double() -> None:
    assert double(2) == 4


def test_double_zero() -> None:
    assert double(0) == 0
"""
SKIPPED = """import pytest


@pytest.mark.skip(reason="not yet")
def test_later() -> None:
    assert False
"""


@pytest.fixture
async def shop(tmp_path: Path) -> AsyncIterator[Path]:
    files = {"shop/__init__.py": "", "shop/core.py": CORE, "tests/test_core.py": TESTS}
    root = commit_tree(
        tmp_path / "shop",
        files | {".gitignore": IGNORED, "pyproject.toml": ladder_pyproject("shop")},
        "HEAD",
    )
    yield root
    await stop_type_daemon(root)


def _summary(result: LadderResult) -> str:
    """What a green verify_run's summary says it checked."""
    rungs = [
        RungReport(rung=r.rung, task=r.rung, state=r.state, tool=r.tool, notes=r.notes)
        for r in result.rungs
    ]
    report = EpochReport(epoch=1, task="v", state=result.state, green=result.ok, rungs=rungs)
    return checked(report)


async def test_a_run_whose_every_selected_test_was_skipped_is_not_green(shop: Path) -> None:
    _write(shop, "tests/test_later.py", SKIPPED)
    result = await run_ladder(shop, LadderRequest(), bus=InMemoryEventBus("t"))
    scoped = next(r for r in result.rungs if r.rung == "test.scoped")
    assert scoped.state == "skipped", scoped
    assert scoped.reason is not None
    assert "1 skipped" in scoped.reason, scoped.reason
    assert "nothing was checked" in scoped.reason, scoped.reason
    # ruff did check the new file: the ladder is green for that, and says only that.
    assert result.state == "green", result
    assert _summary(result) == "ruff"


async def test_a_filtered_run_says_how_many_tests_passed(shop: Path) -> None:
    (shop / "shop" / "core.py").write_text(CORE + "\n# a comment\n", encoding="utf-8")
    request = LadderRequest(rungs=["test.scoped"], filter=["-k double"])
    result = await run_ladder(shop, request, bus=InMemoryEventBus("t"))
    (scoped,) = result.rungs
    assert scoped.state == "green", scoped
    assert "2 passed, 0 failed, 0 skipped" in scoped.notes, scoped.notes
    assert _summary(result) == "pytest 2 passed"
