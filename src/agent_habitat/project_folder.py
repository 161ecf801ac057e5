"""Whether a folder may be a project: the one check every door makes (`project_open`, the MCP
client's roots, `--project`). Standard library only: the bridge and the CLI's fast paths
check a flag before anything heavy is imported.
"""

from __future__ import annotations

import os

from .errors import UsageError

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["PROJECT_FILES", "VCS_FOLDERS", "a_project", "existing_dir", "named_project"]

VCS_FOLDERS = (".git", ".hg", ".svn", ".jj", ".bzr", "_darcs", ".fossil")
"""A folder holding one of these, or under one that does, is a version-controlled tree."""

PROJECT_FILES = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "CMakeLists.txt",
    "Makefile",
    "meson.build",
    "Gemfile",
    "composer.json",
    "deno.json",
    "mix.exs",
    "pubspec.yaml",
    "stack.yaml",
    "flake.nix",
)
"""A folder holding one of these is a project even without version control."""


def a_project(path: str | Path, *, named: str | None = None) -> Path:
    """`path` resolved, when it is a project: inside a version-controlled tree, or holding a
    project file. `/`, a home folder or any other plain folder is refused (the edit verbs
    would write anywhere under it). Only `path` and its parents are looked at, never a walk.

    Every door checks here: `project_open`, the MCP client's roots, and (with `named`, the
    flag's name) a folder the user named, `--project DIR`: a plain folder is then taken as
    asked, but `/` and the home folder never are.
    """
    from pathlib import Path

    if named is not None:
        return Path(named_project(str(path), named))
    root = existing_dir(Path(path))
    if root == Path(root.anchor):
        raise UsageError(_at_the_root(f"path {str(path)!r}"))
    for candidate in [root, *root.parents]:
        if candidate == Path(candidate.anchor):
            break  # a VCS folder at `/` would make everything a project
        if any(os.path.lexists(candidate / name) for name in VCS_FOLDERS):
            return root
    if any(os.path.lexists(root / name) for name in PROJECT_FILES):
        return root
    home = " (your home folder)" if root == Path.home().resolve() else ""
    raise UsageError(
        f"path {str(path)!r}{home} is not a project: no version control (.git, .hg, …) in "
        "or above it and no project file (pyproject.toml, package.json, Cargo.toml, go.mod, "
        "…) in it; open the repository's folder, or make this one a project (`git init`)"
    )


def named_project(path: str, named: str) -> str:
    """A folder the user named with the flag `named` (`--project DIR`), resolved: taken as
    asked, but never `/` nor the home folder (UsageError naming the flag). Paths as text:
    the CLI's light path checks `--project` with this, without `pathlib`."""
    root = os.path.realpath(os.path.expanduser(path))
    if not os.path.isdir(root):
        raise UsageError(f"path {path!r} is not an existing folder; pass a project directory")
    what = f"{named} {path}"
    if os.path.dirname(root) == root:
        raise UsageError(_at_the_root(what))
    if root == os.path.realpath(os.path.expanduser("~")):
        raise UsageError(
            f"{what} is your home folder, not a project (the edit verbs would reach all "
            "of it); name the repository's own folder"
        )
    return root


def _at_the_root(what: str) -> str:
    return f"{what} is the file system's root, not a project; open the repository's own folder"


def existing_dir(path: Path) -> Path:
    """`path` resolved (relative to the cwd), or a UsageError naming it."""
    resolved = path.expanduser().resolve()
    if not resolved.is_dir():
        raise UsageError(f"path {str(path)!r} is not an existing folder; pass a project directory")
    return resolved
