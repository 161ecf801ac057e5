"""pytest's tracebacks read for the verdict: which frame is the project's, and what a
conftest that fails to load raised, and why pytest could not start at all.

A collection error raised from the project's own code (a module-level `ValueError` in a
changed file, imported by a test or a conftest) is the change's doing: the rung is red and
names the frame in the project that raised. A traceback with no frame in the project, or a
conftest importing a package the environment lacks, is the environment failing.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .models import Diagnostic

__all__ = [
    "StartFailure",
    "conftest_error",
    "in_project",
    "in_root_terms",
    "project_frame",
    "raised",
    "relative",
    "start_failure",
    "unimportable",
]

FRAME = re.compile(r"^(?P<file>[^\s:][^:\n]*\.py):(?P<line>\d+): (?P<what>.*)$", re.MULTILINE)
_RAISED = re.compile(r"^E\s+(?P<text>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Failed)\b.*)$", re.M)
_CONFTEST = re.compile(r"^ImportError while loading conftest '(?P<path>[^'\n]+)'\.$", re.M)
_MISSING = re.compile(r"ModuleNotFoundError: No module named '(?P<module>[\w.]+)'")
_NOT_IMPORTABLE = re.compile(
    r"collection error: ModuleNotFoundError: No module named '(?P<module>[A-Za-z_]\w*)'"
)
_INSTALLED = {"site-packages", "dist-packages"}
_PY_TRACEBACK = "Traceback (most recent call last):"
_PY_FRAME = re.compile(r'^\s*File "(?P<file>[^"\n]+)", line (?P<line>\d+)', re.MULTILINE)
_PY_RAISED = re.compile(r"^(?P<text>[A-Za-z_][\w.]*(?:Error|Exception|Exit)\b.*)$", re.MULTILINE)


def relative(path: str, root: Path) -> str:
    """`path` relative to `root` (posix) when it lies inside it, else unchanged."""
    p = Path(path)
    if not p.is_absolute():
        p = root / p
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path


def in_root_terms(text: str, root: Path) -> str:
    """`text` with the paths inside `root` written relative to it: an ImportError names its
    module's file by absolute path, which differs between the tree and HEAD's export."""
    # The longer first: one may hold the other (`/tmp/x` inside `/private/tmp/x`).
    for prefix in sorted({f"{root}{os.sep}", f"{root.resolve()}{os.sep}"}, key=len, reverse=True):
        text = text.replace(prefix, "")
    return text


def in_project(rel: str) -> bool:
    """A traceback path (made relative to the root) is the project's own code: inside the
    root and not an installed package (a `.venv` inside the project holds those)."""
    path = PurePosixPath(rel)
    return not path.is_absolute() and not _INSTALLED & set(path.parts) and ".." not in path.parts


def project_frame(text: str, root: Path) -> tuple[str, int] | None:
    """The deepest frame of `text` that is the project's: (relative path, line)."""
    found = None
    for m in FRAME.finditer(text):
        rel = relative(m["file"], root)
        if in_project(rel):
            found = (rel, int(m["line"]))
    return found


def raised(text: str) -> str | None:
    """The last `E   SomeError: message` line of a pytest traceback, without the `E`."""
    lines = _RAISED.findall(text)
    return str(lines[-1]).strip() if lines else None


def _own_module(root: Path, module: str) -> bool:
    top = module.split(".", 1)[0]
    return any(
        (base / top).is_dir() or (base / f"{top}.py").is_file() for base in (root, root / "src")
    )


def unimportable(diag: Diagnostic, root: Path) -> str | None:
    """The project's own top-level package a collection error could not import at all
    ("No module named 'p'" while `src/p/` is in the tree): the interpreter the ladder uses
    does not see the project (not installed, no `pythonpath`), which fails the same at HEAD
    and is the environment's failing, never the change's. A missing submodule (`p.sub`) of a
    package that imports, or a module the tree lacks, stays the code's."""
    if diag.source != "pytest":
        return None
    m = _NOT_IMPORTABLE.search(diag.message)
    if m is None:
        return None
    top = m["module"]
    for base in (root, root / "src"):
        if (base / top / "__init__.py").is_file() or (base / f"{top}.py").is_file():
            return top
    return None


def conftest_error(text: str, root: Path) -> Diagnostic | None:
    """The project's error behind pytest's "ImportError while loading conftest" (exit 4,
    no report written), located at the deepest frame in the project; None when there is
    none, or when the conftest imports a package that is not installed (the environment's
    failing, not the code's)."""
    head = _CONFTEST.search(text)
    if head is None:
        return None
    block = text[head.end() :].split("\n\n", 1)[0]
    frame = project_frame(block, root)
    missing = _MISSING.search(block)
    if frame is None or (missing is not None and not _own_module(root, missing["module"])):
        return None
    error = raised(block) or "ImportError"
    conftest = relative(head["path"], root)
    return Diagnostic(
        file=frame[0],
        line=frame[1],
        code=error.split(":", 1)[0],
        message=f"{conftest}: collection error: {error} (raised at {frame[0]}:{frame[1]})",
        source="pytest",
    )


@dataclass(frozen=True)
class StartFailure:
    """A Python traceback that ended a pytest run before any test ran (exit 1, no report):
    what it raised, and the deepest frame in the project when there is one."""

    error: str
    frame: tuple[str, int] | None

    def diagnostic(self) -> Diagnostic | None:
        """The change's error at its frame in the project; None when no frame is the
        project's (pytest itself, or a package it imports, is broken: the environment)."""
        if self.frame is None:
            return None
        file, line = self.frame
        return Diagnostic(
            file=file,
            line=line,
            code=self.error.split(":", 1)[0],
            message=f"pytest could not start: {self.error} (raised at {file}:{line})",
            source="pytest",
        )


def start_failure(text: str, root: Path) -> StartFailure | None:
    """The plain Python traceback that stopped pytest before its session (say an old
    pytest importing `UserDict` on Python 3, or a changed module of the project that pytest
    itself imports, as pluggy's); None when the output holds none."""
    at = text.rfind(_PY_TRACEBACK)
    if at < 0:
        return None
    block = text[at:]
    frame = None
    for m in _PY_FRAME.finditer(block):
        rel = relative(m["file"], root)
        if in_project(rel) and (root / rel).is_file():  # never `<frozen runpy>`
            frame = (rel, int(m["line"]))
    errors = _PY_RAISED.findall(block)
    error = str(errors[-1]).strip() if errors else block.strip().splitlines()[-1].strip()
    return StartFailure(error=error[:300], frame=frame)
