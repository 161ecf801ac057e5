"""`--files` (and `verify_run`'s `files`) as project-relative paths, or a usage error
naming the field."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..errors import UsageError
from ..git_env import git_env
from ..regular import is_special, kind_of

__all__ = ["given_files"]


def _at_head(root: Path, rel: str) -> bool:
    # Blocking (one git process), and only for a name that does not exist now.
    try:
        proc = subprocess.run(
            ["git", "cat-file", "-e", f"HEAD:./{rel}"],
            env=git_env(),
            cwd=root,
            capture_output=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def _inside(root: Path, path: Path) -> str | None:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def _given_file(root: Path, name: str) -> str:
    path = Path(name)
    candidates = [path] if path.is_absolute() else [root / name, Path.cwd() / name]
    for candidate in candidates:
        if os.path.lexists(candidate):
            rel = _inside(root, candidate)
            if rel is None:
                raise UsageError(f"{name} is not inside the project {root}", "files")
            return rel
    # Gone now: a real change only when HEAD has it (a file deleted since HEAD).
    for candidate in candidates:
        rel = _inside(root, candidate)
        if rel is not None and _at_head(root, rel):
            return rel
    if all(_inside(root, c) is None for c in candidates):
        raise UsageError(f"{name} is not inside the project {root}", "files")
    raise UsageError(
        f"{name} does not exist in the project {root}, nor at HEAD; "
        "name files that exist, or that were deleted since HEAD",
        "files",
    )


def given_files(root: Path, files: list[str]) -> list[str]:
    """`--files` as project-relative paths: relative to the root if they exist there, else to
    the current directory. A name that does not exist is a usage error unless HEAD has it
    (deleted since HEAD: a real change)."""
    out: set[str] = set()
    for name in files:
        try:
            rel = _given_file(root, name)
        except OSError as exc:  # a name too long for the file system, a loop of links
            shown = name if len(name) <= 80 else f"{name[:80]}… ({len(name)} characters)"
            raise UsageError(f"{shown}: {exc.strerror}", "files") from None
        if is_special(root / rel):
            # No checker should ever open it: ruff, mypy or pytest reading a FIFO blocks.
            raise UsageError(
                f"{name} is {kind_of(os.lstat(root / rel).st_mode)}, not a regular "
                "file; give source files only",
                "files",
            )
        out.add(rel)
    return sorted(out)
