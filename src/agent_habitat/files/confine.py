"""Keeping the edit verbs inside the project root.

A path is resolved against the root and followed through every symlink; what it finally
names must lie inside the root. `..` escapes, absolute paths elsewhere and symlinks that
point out are refused with a message naming the path, and so is any `.git` on the way
(a nested repository's hooks run as surely as the project's own).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError

__all__ = ["OutsideProjectError", "confine"]


class OutsideProjectError(UsageError):
    """The path names something outside the project root, or not a file the verbs may write."""


def confine(root: Path, path: str) -> tuple[Path, str]:
    """The real target of `path` and its label (relative to `root`, POSIX), or refuse."""
    root = root.resolve()
    given = Path(path)
    candidate = given if given.is_absolute() else root / given
    real = candidate.resolve()
    if not real.is_relative_to(root):
        lexical = Path(os.path.normpath(candidate))
        if lexical.is_relative_to(root):
            raise OutsideProjectError(
                f"path {path!r} leads through a symlink to {real}, outside the project root "
                f"{root}; edit the file inside the project instead"
            )
        raise OutsideProjectError(
            f"path {path!r} is outside the project root {root}; give a path inside it"
        )
    label = real.relative_to(root).as_posix()
    if real == root or real.is_dir():
        raise OutsideProjectError(f"path {path!r} is a folder, not a file")
    if ".git" in label.lower().split("/"):
        # At any depth: a nested repository's hooks run as surely as the project's own.
        raise OutsideProjectError(
            f"path {path!r} is inside .git; the edit verbs never change git's own files (a "
            "nested repository's neither): edit the work tree's files instead"
        )
    return real, label
