"""The test rung records per-test dependency data for a single-module project too (a
module beside `pyproject.toml`, no package: parse, six), so the next edit is selected by
what the tests ran; before, only the background recording did, and each verify until then
ran every test that imports the module, a comment-only edit included."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, RungResult, run_ladder
from git_tree import commit_tree

from .test_selection_single_module import MODULE, OTHER, TESTS

pytestmark = pytest.mark.anyio


def _project(root: Path) -> Path:
    pyproject = (
        '[project]\nname = "calc"\nversion = "0"\n\n'
        f"[tool.habitat.ladder]\npython = {sys.executable!r}\n"
    )
    files = {
        "calc.py": MODULE,
        "test_calc.py": TESTS,
        "test_other.py": OTHER,
        "pyproject.toml": pyproject,
        ".gitignore": "__pycache__/\n",
    }
    return commit_tree(root, files)


def _edit(root: Path, old: str, new: str) -> None:
    path = root / "calc.py"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


async def _scoped(root: Path) -> RungResult:
    ladder = LadderRequest.model_validate({"rungs": ["test.scoped"]})
    result = await run_ladder(root, ladder, bus=InMemoryEventBus(str(root)))
    (only,) = result.rungs
    return only


async def test_a_single_module_projects_test_rung_records_for_the_next_edit(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "calc")
    original = (root / "calc.py").read_text(encoding="utf-8")
    _edit(root, "return a + b", "return b + a")
    first = await _scoped(root)  # no data yet: every test that imports calc.py
    assert first.state == "green", first.notes
    assert any("recorded test dependencies of 4 tests" in n for n in first.notes), first.notes
    # Two files, four tests: "2 selected" read as two tests beside "4 passed" (xmltodict).
    assert any(n.startswith("2 test path(s) selected: ") for n in first.notes), first.notes
    (root / "calc.py").write_text(original, encoding="utf-8")
    _edit(root, "def add", "# another note\ndef add")
    comment = await _scoped(root)
    assert comment.state == "skipped", comment.notes
    assert comment.reason == "no test is affected by the change"
    (root / "calc.py").write_text(original, encoding="utf-8")
    _edit(root, "return a + b", "return a + b + 0")
    add = await _scoped(root)
    assert add.state == "green", add.notes
    said = " ".join(add.notes)
    assert "test_add" in said, said
    assert "test_mul" not in said, said
