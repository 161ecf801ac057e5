"""The dmypy daemon is asked about the whole package every time (its file list never
changes, so it never re-reads it), and the rung keeps the errors of the modules the change
can reach: every importer, however indirect. An error elsewhere is not the change's."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.verify import RungResult, stop_type_daemon
from git_tree import commit_tree, write
from ladder_runs import climb_one

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

FILES = {
    "pkg/__init__.py": "",
    "pkg/base.py": "def value() -> int:\n    return 1\n",
    "pkg/user.py": "from pkg.base import value\n\nVALUE = value()\n",
    "pkg/mid.py": "from pkg.user import VALUE\n\nTOTAL: int = VALUE + 1\n",
    "pkg/lonely.py": 'def bad() -> int:\n    return "wrong since HEAD"\n',
    "pkg/other.py": "NAME = 'other'\n",
    ".gitignore": ".mypy_cache/\n__pycache__/\n",
    "pyproject.toml": (
        f'[project]\nname = "pkg"\nversion = "0"\n\n[tool.habitat.ladder]\npython = '
        f"{sys.executable!r}\n"
    ),
}


@pytest.fixture
async def pkg(tmp_path: Path) -> AsyncIterator[Path]:
    root = commit_tree(tmp_path / "proj", FILES)
    yield root
    await stop_type_daemon(root)


async def _compile(root: Path) -> RungResult:
    return await climb_one(root, "compile.project")


def _files(result: RungResult) -> list[str]:
    return [a for a in result.command if a.endswith(".py")]


async def test_the_daemon_checks_the_whole_package_and_the_rung_keeps_what_the_change_reaches(
    pkg: Path,
) -> None:
    write(pkg, "pkg/other.py", "NAME = 'other, changed'\n")
    unrelated = await _compile(pkg)
    assert unrelated.tool == "dmypy"
    assert unrelated.state == "green", unrelated
    assert unrelated.diagnostics == [], "lonely.py's error is not reachable from other.py"
    every = _files(unrelated)
    assert every == sorted(rel for rel in FILES if rel.endswith(".py"))

    write(pkg, "pkg/base.py", 'def value() -> str:\n    return "one"\n')
    reached = await _compile(pkg)
    assert _files(reached) == every, "the daemon's list changed"
    assert reached.state == "red", reached
    errors = {(d.file, d.line) for d in reached.diagnostics if not d.preexisting}
    assert errors == {("pkg/mid.py", 3)}, reached.diagnostics  # two imports away from base
    assert all(d.file != "pkg/lonely.py" for d in reached.diagnostics)


async def test_a_file_mypy_cannot_read_elsewhere_in_the_package_narrows_the_check(
    tmp_path: Path,
) -> None:
    # Python's parser takes it (so the import graph builds); mypy stops at it ("errors
    # prevented further checking"), exit 2, and nothing imports it.
    files = {**FILES, "pkg/legacy.py": "def pair(a, a):\n    pass\n"}
    root = commit_tree(tmp_path / "templated", files)
    try:
        write(root, "pkg/base.py", 'def value() -> str:\n    return "one"\n')
        result = await _compile(root)
        assert result.state == "red", result
        assert {(d.file, d.line) for d in result.diagnostics if not d.preexisting} == {
            ("pkg/mid.py", 3)
        }
        assert any("the whole package did not type-check" in n for n in result.notes)
        assert "pkg/legacy.py" not in _files(result)
    finally:
        await stop_type_daemon(root)
