"""Whether a change is one no type checker can tell from HEAD: every touched file is Python,
was at HEAD, and parses to the same tree (type comments and `# type: ignore` lines
included, positions not) with the same checker directives in its comments (`# mypy:`,
`# pyright:`, `# pyrefly:`, `# ty:`, `# type:`, `# pyre-`). A comment or blank lines then
change nothing a checker reads, so compile.project has no new finding to look for: HEAD's
findings are the tree's. Not compiled bytecode: a local variable's annotation or a moved
`# type: ignore` leaves it the same and changes what mypy says."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ...git_env import git_env
from ...regular import read_regular

__all__ = ["same_types_as_head"]

_DIRECTIVE = re.compile(rb"\b(?:mypy|pyright|basedpyright|pyrefly|ty|type)\s*:|pyre-")
_MAX_FILES = 20
"""A change of more files than this is checked rather than compared (one git call each)."""

_Read = tuple[str, list[bytes]]


class _NotAtHead(Exception):
    """The file is new since HEAD, or there is no HEAD (not cached: git may say otherwise
    a moment later)."""


def same_types_as_head(root: Path, touched: Sequence[str], head: str | None = None) -> bool:
    """True only when every file of `touched` (project-relative) is the same to a type
    checker as at HEAD (blocking: reads git). `head`, HEAD's commit when the caller knows
    it, lets HEAD's side be read once per commit and file, not once per verify."""
    if not touched or len(touched) > _MAX_FILES:
        return False
    return all(_same(root, rel, head) for rel in touched)


def _same(root: Path, rel: str, head: str | None) -> bool:
    if not rel.endswith((".py", ".pyi")):
        return False
    try:
        now = read_regular(root / rel, rel)
        shown = _show(root, "HEAD", rel) if head is None else _at_head(root, head, rel)
    except (OSError, subprocess.SubprocessError, _NotAtHead):
        return False
    if shown == now:
        return True
    was = _read(shown) if head is None else _head_read(root, head, rel)
    return was is not None and was == _read(now)


def _show(root: Path, commit: str, rel: str) -> bytes:
    shown = subprocess.run(
        ["git", "show", f"{commit}:./{rel}"],
        env=git_env(),
        cwd=root,
        capture_output=True,
        check=False,
        timeout=60,
    )
    if shown.returncode != 0:
        raise _NotAtHead(rel)
    return shown.stdout


@functools.lru_cache(maxsize=64)
def _at_head(root: Path, head: str, rel: str) -> bytes:
    """A file's bytes in commit `head` (a commit's content never changes: cached)."""
    return _show(root, head, rel)


@functools.lru_cache(maxsize=64)
def _head_read(root: Path, head: str, rel: str) -> _Read | None:
    return _read(_at_head(root, head, rel))


def _read(source: bytes) -> _Read | None:
    """What a checker reads of `source`: its tree (type comments included) and every line
    that holds a `#` and a checker directive, whole (a comment's directive changed, added
    or removed changes one of them; a directive-like text in a string or a reformatted line
    around one only makes the check run); None when it does not parse. Lines, not tokens:
    Python's tokenize took 90 ms for a 1,000-line module, the regex 2 ms."""
    try:
        tree = ast.dump(ast.parse(source, type_comments=True))
    except (SyntaxError, ValueError):
        return None
    lines = [
        line.strip() for line in source.splitlines() if b"#" in line and _DIRECTIVE.search(line)
    ]
    return tree, lines
