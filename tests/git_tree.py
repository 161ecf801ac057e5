"""A small committed project for tests that need git history: files written, then committed.

Imported as `git_tree`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agent_habitat.git_env import git_env

__all__ = ["IGNORED", "commit_tree", "git", "ladder_pyproject", "write"]

IGNORED = ".mypy_cache/\n.ruff_cache/\n__pycache__/\n.pytest_cache/\n"
"""A `.gitignore` for what the ladder's tools leave in a Python project."""


def git(root: Path, *args: str) -> None:
    """Run git in `root` with a throwaway identity (a fresh machine has none configured), on
    `root`'s repository even when the tests run under a hook or `git bisect run`."""
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        env=git_env(),
        cwd=root,
        check=True,
        capture_output=True,
    )


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


def commit_tree(root: Path, files: dict[str, str], message: str = "init") -> Path:
    """Write `files` (relative path → text) under `root` and commit them as the first commit."""
    for rel, text in files.items():
        write(root, rel, text)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return root


def ladder_pyproject(name: str, ladder: str = "") -> str:
    """A `pyproject.toml` for project `name` whose ladder runs this interpreter (it has the
    tools: ruff, mypy, pytest); `ladder`: more `[tool.habitat.ladder]` lines, then any
    other tables."""
    return (
        f'[project]\nname = "{name}"\nversion = "0"\n\n'
        f"[tool.habitat.ladder]\npython = {sys.executable!r}\n{ladder}"
    )
