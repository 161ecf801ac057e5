"""HEAD is asked about a test run's failures while the run goes on (rungs/head_early.py):
the recording plugin names each failure as it fails, and by the time the run's verdict is
settled HEAD has answered for every one of them, under the key the junit report gives it,
so `settle_tests` runs nothing on HEAD after the run. Real pytest, real git, HEAD's export.

The keys are the subtle part: a test inherited from a base class in another file is named
by the junit report after the file its function is in (mistune's tests), and a
parameterised one with its parameters; a failure named otherwise would be asked of HEAD
twice, once here and once after the run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, RungName, RungResult, run_ladder, stop_type_daemon
from git_tree import IGNORED, commit_tree, ladder_pyproject

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CORE = """def double(x: int) -> int:
    return x * 2


def half(x: int) -> int:
    return x // 3  # an old bug test_half has caught since before HEAD
"""
BASE = """from shop.core import double, half


class Checks:
    def test_half(self) -> None:
        assert half(6) == 3

    def test_double(self) -> None:
        assert double(2) == 4
"""
TESTS = """import pytest

from shop.core import double
from tests.base import Checks


class TestShop(Checks):
    pass


@pytest.mark.parametrize("x", [1, 2])
def test_doubles(x: int) -> None:
    assert double(x) == x + x


def test_passes() -> None:
    assert True
"""


@pytest.fixture
async def shop(tmp_path: Path) -> AsyncIterator[Path]:
    files = {
        "shop/__init__.py": "",
        "shop/core.py": CORE,
        "tests/__init__.py": "",
        "tests/base.py": BASE,
        "tests/test_shop.py": TESTS,
    }
    root = commit_tree(
        tmp_path / "shop",
        files | {".gitignore": IGNORED, "pyproject.toml": ladder_pyproject("shop")},
        "HEAD, with test_half failing",
    )
    yield root
    await stop_type_daemon(root)


async def _rung(root: Path, rung: RungName) -> RungResult:
    result = await run_ladder(root, LadderRequest(rungs=[rung]), bus=InMemoryEventBus("t"))
    (only,) = result.rungs
    return only


def _head_runs(result: RungResult, which: str) -> list[str]:
    assert result.spool is not None
    return sorted(p.name for p in Path(result.spool).parent.glob(f"*.head-tests{which}.out"))


def _failures(result: RungResult) -> list[tuple[str, bool]]:
    return sorted((d.message.split(": ", 1)[0], d.preexisting) for d in result.diagnostics)


@pytest.mark.parametrize("rung", ["test.full", "test.scoped"])
async def test_head_answers_while_the_run_goes_on_and_nothing_is_asked_after_it(
    shop: Path, rung: RungName
) -> None:
    core = shop / "shop" / "core.py"
    core.write_text(CORE.replace("x * 2", "x * 3"), encoding="utf-8")
    result = await _rung(shop, rung)
    assert result.state == "red", result
    # The inherited tests are named after tests/base.py, where their functions are.
    assert _failures(result) == [
        ("tests/base.py::test_double", False),
        ("tests/base.py::test_half", True),
        ("tests/test_shop.py::test_doubles[1]", False),
        ("tests/test_shop.py::test_doubles[2]", False),
    ]
    assert _head_runs(result, "-early*"), "HEAD was not asked while the run went on"
    assert _head_runs(result, "") == [], "HEAD was asked again after the run"
    assert result.baseline is not None
    assert result.baseline.startswith("HEAD ")
    assert not result.baseline.endswith("(cached)")  # asked by this run, not an earlier one


async def test_what_head_answered_before_is_not_asked_again(shop: Path) -> None:
    core = shop / "shop" / "core.py"
    core.write_text(CORE.replace("x * 2", "x * 3"), encoding="utf-8")
    first = await _rung(shop, "test.full")
    assert first.state == "red", first
    asked = _head_runs(first, "*")
    again = await _rung(shop, "test.full")
    assert again.state == "red", again
    assert _failures(again) == _failures(first)
    assert _head_runs(again, "*") == asked  # every answer kept: HEAD runs nothing more
    assert again.baseline is not None
    assert again.baseline.endswith("(cached)")
