"""Whether a change is one no type checker can tell from HEAD: every touched file is Python,
was at HEAD, and parses to the same tree (type comments and `# type: ignore` lines
included, positions not) with the same checker directives in its comments (`# mypy:`,
`# pyright:`, `# pyrefly:`, `# ty:`, `# type:`, `# pyre-`). A comment or blank lines then
change nothing a checker reads, so compile.project has no new finding to look for: HEAD's
findings are the tree's. Not compiled bytecode: a local variable's annotation or a moved
`# type: ignore` leaves it the same and changes what mypy says.

The common case is answered from the lines (`comment_lines.comment_lines_only`): one run
of whole-line comments and blank lines added, removed or changed, none a directive, none
inside one of HEAD's multi-line strings nor after a line continued by a backslash, and no
coding declaration in the first two lines. The tokens are then HEAD's, so the tree is too,
without parsing and dumping it (`ast.dump` of a 1,000-line module: 10-26 ms of a comment's
verify at load 18). Anything else is compared tree to tree.
"""

from __future__ import annotations

import ast
import functools
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ...git_env import git_show
from ...regular import read_regular
from .. import python_ast
from ..comment_lines import DIRECTIVE, comment_lines_only, string_spans

__all__ = ["parses_as_head", "same_types_as_head"]

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


def parses_as_head(root: Path, head: str, rel: str, now: bytes) -> bool:
    """`now` (the content of `rel`) is HEAD's, or differs from it only by whole-line comments
    and blank lines while HEAD's parsed (comment_lines.py): it parses as HEAD's did, told
    from the lines (blocking: git, once per commit and file)."""
    try:
        shown = _at_head(root, head, rel)
    except (OSError, subprocess.SubprocessError, _NotAtHead):
        return False
    strings = _head_strings(root, head, rel)
    return strings is not None and (shown == now or comment_lines_only(shown, now, strings))


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
    if head is not None and comment_lines_only(shown, now, _head_strings(root, head, rel)):
        return True
    was = _read(shown) if head is None else _head_read(root, head, rel)
    return was is not None and was == _read(now)


def _show(root: Path, commit: str, rel: str) -> bytes:
    shown = git_show(root, commit, rel)
    if shown is None:
        raise _NotAtHead(rel)
    return shown


@functools.lru_cache(maxsize=64)
def _at_head(root: Path, head: str, rel: str) -> bytes:
    """A file's bytes in commit `head` (a commit's content never changes: cached)."""
    return _show(root, head, rel)


@functools.lru_cache(maxsize=64)
def _head_read(root: Path, head: str, rel: str) -> _Read | None:
    return _read(_at_head(root, head, rel))


@functools.lru_cache(maxsize=64)
def _head_strings(root: Path, head: str, rel: str) -> tuple[tuple[int, int], ...] | None:
    """The lines each multi-line string of HEAD's file spans (`string_spans`), once per
    commit and file; None when it does not parse."""
    try:
        return string_spans(_at_head(root, head, rel))
    except (OSError, subprocess.SubprocessError, _NotAtHead):
        return None


def _read(source: bytes) -> _Read | None:
    """What a checker reads of `source`: its tree (type comments included) and every line
    that holds a `#` and a checker directive, whole (a comment's directive changed, added
    or removed changes one of them; a directive-like text in a string or a reformatted line
    around one only makes the check run); None when it does not parse. Lines, not tokens:
    Python's tokenize took 90 ms for a 1,000-line module, the regex 2 ms."""
    try:
        tree = ast.dump(python_ast.parse(source, type_comments=True))
    except (SyntaxError, ValueError):
        return None
    lines = [
        line.strip() for line in source.splitlines() if b"#" in line and DIRECTIVE.search(line)
    ]
    return tree, lines
