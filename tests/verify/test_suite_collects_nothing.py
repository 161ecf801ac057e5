"""A whole-suite run in which pytest collects no test says where pytest looks, not "check
the filter or selection" when neither narrowed it (jsonpointer 3.0.0 keeps its tests in
`tests.py`, which pytest's default `python_files` does not match: a new user's first
verify said to check a filter nobody gave)."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_tree import IGNORED, commit_tree, ladder_pyproject
from ladder_runs import climb_one

pytestmark = pytest.mark.anyio


async def test_no_test_collected_from_the_whole_suite_names_where_pytest_looks(
    tmp_path: Path,
) -> None:
    root = commit_tree(
        tmp_path / "p",
        {
            ".gitignore": IGNORED,
            "pyproject.toml": ladder_pyproject("p"),
            "mod.py": "def f() -> int:\n    return 1\n",
            "tests.py": "import mod\n\n\ndef test_f() -> None:\n    assert mod.f() == 1\n",
        },
    )
    result = await climb_one(root, "test.full")
    assert result.state == "error", result
    assert result.reason is not None
    assert "collected no tests" in result.reason
    assert "python_files" in result.reason, result.reason
    assert "filter or selection" not in result.reason, result.reason
