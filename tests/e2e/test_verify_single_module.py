"""A project whose code is one top-level module (`parse.py` beside `pyproject.toml`, as
parse 1.20 ships it) is type-checked like a package: a type error there was green, the
rung skipped with "no package module is affected by the change"."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.verify import stop_type_daemon
from git_tree import commit_tree, write
from ladder_runs import climb_one

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

FILES = {
    "calc.py": "def total(a: int, b: int) -> int:\n    return a + b\n",
    "fmt.py": "from calc import total\n\nSHOWN: int = total(1, 2)\n",
    "tests/test_calc.py": (
        "from calc import total\n\n\ndef test_total():\n    assert total(1, 2) == 3\n"
    ),
    ".gitignore": ".mypy_cache/\n__pycache__/\n",
    "pyproject.toml": (
        '[project]\nname = "calc"\nversion = "0"\n\n[tool.setuptools]\npy-modules = '
        f'["calc", "fmt"]\n\n[tool.habitat.ladder]\npython = {sys.executable!r}\n'
    ),
}


@pytest.fixture
async def flat(tmp_path: Path) -> AsyncIterator[Path]:
    root = commit_tree(tmp_path / "flat", FILES)
    yield root
    await stop_type_daemon(root)


async def test_a_type_error_in_a_top_level_module_is_red_where_it_shows(flat: Path) -> None:
    write(flat, "calc.py", "def total(a: int, b: int) -> str:\n    return str(a + b)\n")
    result = await climb_one(flat, "compile.project")
    assert result.state == "red", result
    # Its importer is checked too: the error shows in fmt.py, not in the touched file.
    assert {(d.file, d.line) for d in result.diagnostics if not d.preexisting} == {("fmt.py", 3)}
    write(flat, "calc.py", FILES["calc.py"].replace("a + b", "b + a"))
    fixed = await climb_one(flat, "compile.project")
    assert fixed.state == "green", fixed
