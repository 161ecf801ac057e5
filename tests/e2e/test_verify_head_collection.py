"""Red means the change did it, for a test module that fails to import: one that already
failed to collect at HEAD, with the same error, is listed as already failing at HEAD, not
red; a new collection error, or another error in that module, stays red; and a run in which
no test ran because of HEAD's collection error is `error`, never green (nothing was
checked). Real pytest, run on HEAD's export for the module."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, RungName, RungResult, run_ladder, stop_type_daemon
from git_tree import IGNORED, commit_tree, ladder_pyproject
from git_tree import write as _write

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CORE = "def double(x: int) -> int:\n    return x * 2\n"
TESTS = """from shop.core import double


def test_double() -> None:
    assert double(2) == 4
"""
BROKEN = """from shop.core import triple


def test_triple() -> None:
    assert triple(2) == 6
"""
"""A test module HEAD already cannot import (`triple` was never written)."""


@pytest.fixture
async def shop(tmp_path: Path) -> AsyncIterator[Path]:
    files = {
        "shop/__init__.py": "",
        "shop/core.py": CORE,
        "tests/test_core.py": TESTS,
        "tests/test_broken.py": BROKEN,
    }
    root = commit_tree(
        tmp_path / "shop",
        files | {".gitignore": IGNORED, "pyproject.toml": ladder_pyproject("shop")},
        "HEAD, with tests/test_broken.py failing to import",
    )
    yield root
    await stop_type_daemon(root)


async def _rung(root: Path, rung: RungName, filter: list[str] | None = None) -> RungResult:
    request = LadderRequest(rungs=[rung], filter=filter)
    result = await run_ladder(root, request, bus=InMemoryEventBus("t"))
    (only,) = result.rungs
    return only


def _collection(result: RungResult) -> list[tuple[str, bool]]:
    return [
        (d.message.split(": ", 1)[0], d.preexisting)
        for d in result.diagnostics
        if "collection error" in d.message
    ]


@pytest.mark.parametrize("rung", ["test.full", "test.scoped"])
async def test_heads_collection_error_is_listed_not_red_and_the_rest_ran(
    shop: Path, rung: RungName
) -> None:
    (shop / "shop" / "core.py").write_text(CORE.replace("x * 2", "2 * x"), encoding="utf-8")
    result = await _rung(shop, rung)
    assert result.state == "green", result
    assert _collection(result) == [("tests/test_broken.py", True)]
    assert (result.new_findings, result.preexisting_findings) == (0, 1)
    assert "already failing at HEAD" in (result.reason or ""), result.reason
    assert any(n.startswith("1 passed") for n in result.notes), result.notes  # test_double
    assert result.baseline is not None
    assert result.baseline.startswith("HEAD "), result.baseline


async def test_no_test_ran_because_of_heads_collection_error_is_error(shop: Path) -> None:
    (shop / "shop" / "core.py").write_text(CORE.replace("x * 2", "2 * x"), encoding="utf-8")
    result = await _rung(shop, "test.scoped", filter=["tests/test_broken.py"])
    assert result.state == "error", result
    assert result.reason is not None
    assert result.reason.startswith("no test ran"), result.reason
    assert "at HEAD" in result.reason
    assert _collection(result) == [("tests/test_broken.py", True)]


async def test_a_new_collection_error_beside_heads_is_red(shop: Path) -> None:
    _write(shop, "tests/test_more.py", "from shop.core import quadruple\n")
    result = await _rung(shop, "test.full")
    assert result.state == "red", result
    assert _collection(result) == [
        ("tests/test_more.py", False),
        ("tests/test_broken.py", True),
    ]
    assert "test_more.py" in (result.reason or ""), result.reason


async def test_another_error_in_heads_broken_module_is_red(shop: Path) -> None:
    broken = shop / "tests" / "test_broken.py"
    broken.write_text(BROKEN.replace("triple", "tripel"), encoding="utf-8")
    result = await _rung(shop, "test.full")
    assert result.state == "red", result
    assert _collection(result) == [("tests/test_broken.py", False)]
    assert "tripel" in (result.reason or ""), result.reason


async def test_a_module_broken_since_head_by_the_change_is_red(shop: Path) -> None:
    # HEAD imports fine; the change removes what it imports: the change's, not HEAD's.
    (shop / "shop" / "core.py").write_text("def half(x: int) -> int:\n    return x // 2\n")
    result = await _rung(shop, "test.full")
    assert result.state == "red", result
    assert ("tests/test_core.py", False) in _collection(result)
