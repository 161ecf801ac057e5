"""A change that leaves the touched files' code as HEAD's: comments and blank lines only.

No test can run differently then, whatever the recorded data says (deps.py): selection
answers it before any record is read (`selection.py`). A file is told from its lines first
(`comment_lines.py`: whole-line comments and blank lines, no compile), else by its blocks
(`blocks.py`: the skeleton and every block the same).
"""

from __future__ import annotations

import functools
from pathlib import Path

from ...regular import read_regular
from ..blocks import changed_blocks
from ..comment_lines import comment_lines_only, string_spans
from .deps import _at_commit, _Tree

__all__ = ["same_code_as_head"]


def same_code_as_head(root: Path, touched: list[str], head: str) -> bool:
    """Whether every touched file is Python that compiles to HEAD's code (its skeleton and
    every block the same: comments, blank lines, formatting). No test can run differently
    then, whatever the records say: they may all be of earlier edits' content (the first
    comment-only edit after a red one ran the 80 tests the red edit's code had run).
    Files that are all HEAD's very content are no edit at all: a person who names them
    (`--files`) asks for their tests, so they are not "the same code" here."""
    if not touched or not all(rel.endswith((".py", ".pyi")) for rel in touched):
        return False
    tree = _Tree(root, {}, head)
    edited = False
    for rel in touched:
        old = tree.head_blocks(rel)
        if old is None:
            continue  # HEAD's very content
        if isinstance(old, str):
            return False
        if not _comment_lines_only(root, head, rel):
            new = tree.blocks(rel)
            if new is None or changed_blocks(old.to_json(), new) != set():
                return False
        edited = True
    return edited


@functools.lru_cache(maxsize=64)
def _head_spans(root: Path, head: str, rel: str) -> tuple[tuple[int, int], ...] | None:
    shown = _at_commit(root, head, rel)
    return string_spans(shown[0]) if shown is not None else None


def _comment_lines_only(root: Path, head: str, rel: str) -> bool:
    """`rel` differs from HEAD's (which compiled) only by whole-line comments and blank lines,
    told from the lines (comment_lines.py): its code is HEAD's without compiling it."""
    shown = _at_commit(root, head, rel)
    if shown is None or head == "HEAD":  # a name, not a commit: nothing cached by it
        return False
    try:
        now = read_regular(root / rel, rel)
    except OSError:
        return False
    return comment_lines_only(shown[0], now, _head_spans(root, head, rel))
