"""A small sample project (package, tests, pyproject, its own git repository) and the
defect each rung exists to catch. The demo, the benchmark and the tests build it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..git_env import git_env

__all__ = ["DEFECTS", "FILES", "break_sample", "build_sample", "fix_sample"]

FILES: dict[str, str] = {
    ".gitignore": "__pycache__/\n.mypy_cache/\n.pytest_cache/\n.ruff_cache/\n",
    "README.md": "# calc\n\nA sample project for the verification ladder.\n",
    "src/calc/__init__.py": '"""calc: a tiny sample package."""\n',
    "src/calc/arith.py": (
        '"""Arithmetic."""\n\n\n'
        "def add(a: int, b: int) -> int:\n    return a + b\n\n\n"
        "def mul(a: int, b: int) -> int:\n    return a * b\n"
    ),
    "src/calc/text.py": (
        '"""Text helpers."""\n\n\ndef shout(s: str) -> str:\n    return s.upper() + "!"\n'
    ),
    "src/calc/report.py": (
        '"""A report built on arith."""\n\nfrom calc.arith import add, mul\n\n'
        "WIDTH = 20\n\n\n"
        "def total(xs: list[int]) -> str:\n    s = 0\n    for x in xs:\n        s = add(s, x)\n"
        '    return f"total={s} double={mul(s, 2)}".ljust(WIDTH)\n'
    ),
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef numbers() -> list[int]:\n"
    "    return [1, 2, 3]\n",
    "tests/test_arith.py": (
        "from calc.arith import add, mul\n\n\n"
        "def test_add() -> None:\n    assert add(2, 3) == 5\n\n\n"
        "def test_mul() -> None:\n    assert mul(2, 3) == 6\n"
    ),
    "tests/test_text.py": (
        "from calc.text import shout\n\n\n"
        'def test_shout() -> None:\n    assert shout("hi") == "HI!"\n'
    ),
    "tests/test_report.py": (
        "from calc import report\n\n\n"
        "def test_total(numbers: list[int]) -> None:\n"
        '    assert report.total(numbers).strip() == "total=6 double=12"\n'
    ),
}

# rung → (file, replacement text, what is wrong). Each breaks exactly that rung first.
DEFECTS: dict[str, tuple[str, str, str]] = {
    "syntax": (
        "src/calc/arith.py",
        "def add(a: int, b: int) -> int\n    return a + b\n\n\ndef mul(a: int, b: int) -> int:\n"
        "    return a * b\n",
        "a missing colon",
    ),
    "lint": (
        "src/calc/arith.py",
        "import os\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n\n\n"
        "def mul(a: int, b: int) -> int:\n    return a * b\n",
        "an unused import",
    ),
    "type": (
        "src/calc/arith.py",
        "def add(a: int, b: int) -> int:\n    return str(a + b)\n\n\n"
        "def mul(a: int, b: int) -> int:\n    return a * b\n",
        "a str returned where an int is declared",
    ),
    "import": (
        "src/calc/report.py",
        FILES["src/calc/report.py"].replace("WIDTH = 20", 'WIDTH = int("twenty")'),
        "a module-level call that fails at import time",
    ),
    "test": (
        "src/calc/arith.py",
        FILES["src/calc/arith.py"].replace("return a + b", "return a - b"),
        "add() subtracts",
    ),
}


def _pyproject(python: str, type_checker: str) -> str:
    return (
        '[project]\nname = "calc"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n\n'
        '[tool.mypy]\nstrict = true\nmypy_path = "src"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src"]\n'
        'addopts = "-p no:cacheprovider"\n\n'
        "[tool.ruff]\nline-length = 100\n\n"
        f"[tool.habitat.ladder]\npython = {python!r}\ntype_checker = {type_checker!r}\n"
    )


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=habitat", "-c", "user.email=habitat@localhost", *args],
        env=git_env(),
        cwd=root,
        check=True,
        capture_output=True,
    )


def build_sample(root: Path, *, python: str | None = None, type_checker: str = "mypy") -> Path:
    """Write the sample into `root` and commit it in a fresh git repository (blocking)."""
    root.mkdir(parents=True, exist_ok=True)
    files = {**FILES, "pyproject.toml": _pyproject(python or sys.executable, type_checker)}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "sample")
    return root


def break_sample(root: Path, defect: str) -> str:
    """Apply one of `DEFECTS`; returns the relative path it changed."""
    rel, text, _ = DEFECTS[defect]
    (root / rel).write_text(text, encoding="utf-8")
    return rel


def fix_sample(root: Path, defect: str) -> str:
    rel = DEFECTS[defect][0]
    (root / rel).write_text(FILES[rel], encoding="utf-8")
    return rel
