"""Whether a project is Go's and which paths are (cheap to import: the snapshot and the
watcher ask it)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

__all__ = ["MODULE_FILES", "detect", "owns"]

MODULE_FILES = frozenset({"go.mod", "go.sum", "go.work", "go.work.sum"})


def detect(root: Path) -> bool:
    """The project root has `go.mod` or `go.work`."""
    return (root / "go.mod").is_file() or (root / "go.work").is_file()


def owns(rel: str) -> bool:
    """A Go source, a module file, or a file under a package's `testdata/` (which its
    tests read)."""
    path = PurePosixPath(rel)
    return path.suffix == ".go" or path.name in MODULE_FILES or "testdata" in path.parts[:-1]
