"""A small committed project for tests that need git history: files written, then committed.

Imported as `git_tree`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["git", "write"]


def git(root: Path, *args: str) -> None:
    """Run git in `root` with a throwaway identity (a fresh machine has none configured)."""
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")
