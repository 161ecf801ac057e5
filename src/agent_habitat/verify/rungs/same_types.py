"""Whether a change is one no type checker can tell from HEAD: every touched file is Python,
was at HEAD, and parses to the same tree (type comments and `# type: ignore` lines
included, positions not) with the same checker directives in its comments (`# mypy:`,
`# pyright:`, `# pyrefly:`, `# ty:`, `# type:`, `# pyre-`). A comment or blank lines then
change nothing a checker reads, so compile.project has no new finding to look for: HEAD's
findings are the tree's. Not compiled bytecode: a local variable's annotation or a moved
`# type: ignore` leaves it the same and changes what mypy says."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from collections.abc import Sequence
from pathlib import Path

from ...regular import read_regular

__all__ = ["same_types_as_head"]

_DIRECTIVE = re.compile(r"\b(?:mypy|pyright|basedpyright|pyrefly|ty|type)\s*:|pyre-")
_MAX_FILES = 20
"""A change of more files than this is checked rather than compared (one git call each)."""


def same_types_as_head(root: Path, touched: Sequence[str]) -> bool:
    """True only when every file of `touched` (project-relative) is the same to a type
    checker as at HEAD (blocking: reads git)."""
    if not touched or len(touched) > _MAX_FILES:
        return False
    return all(_same(root, rel) for rel in touched)


def _same(root: Path, rel: str) -> bool:
    if not rel.endswith((".py", ".pyi")):
        return False
    try:
        now = read_regular(root / rel, rel)
        shown = subprocess.run(
            ["git", "show", f"HEAD:./{rel}"], cwd=root, capture_output=True, check=False, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return False
    if shown.returncode != 0:
        return False  # new since HEAD, or no HEAD
    if shown.stdout == now:
        return True
    head = _read(shown.stdout)
    return head is not None and head == _read(now)


def _read(source: bytes) -> tuple[str, list[str]] | None:
    """What a checker reads of `source`: its tree and its directive comments; None when it
    does not parse."""
    try:
        tree = ast.dump(ast.parse(source, type_comments=True))
        comments = [
            token.string
            for token in tokenize.tokenize(io.BytesIO(source).readline)
            if token.type == tokenize.COMMENT and _DIRECTIVE.search(token.string)
        ]
    except (SyntaxError, ValueError, tokenize.TokenError):
        return None
    return tree, comments
