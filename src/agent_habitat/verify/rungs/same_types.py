"""Whether a change is one no type checker can tell from HEAD: every touched file is Python,
was at HEAD, and parses to the same tree (type comments and `# type: ignore` lines
included, positions not) with the same checker directives in its comments (`# mypy:`,
`# pyright:`, `# pyrefly:`, `# ty:`, `# type:`, `# pyre-`). A comment or blank lines then
change nothing a checker reads, so compile.project has no new finding to look for: HEAD's
findings are the tree's. Not compiled bytecode: a local variable's annotation or a moved
`# type: ignore` leaves it the same and changes what mypy says.

The common case is answered from the lines (`_comment_lines_only`): one run of whole-line
comments and blank lines added, removed or changed, none a directive, none inside one of
HEAD's multi-line strings nor after a line continued by a backslash, and no coding
declaration in the first two lines. The tokens are then HEAD's, so the tree is too, without
parsing and dumping it (`ast.dump` of a 1,000-line module: 10-26 ms of a comment's verify at
load 18). Anything else is compared tree to tree.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ...git_env import git_show
from ...regular import read_regular
from .. import python_ast

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
    if head is not None and _comment_lines_only(shown, now, _head_strings(root, head, rel)):
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


_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=]")
"""PEP 263's declaration (in the first two lines): moving or changing it changes how the
file is read."""


@functools.lru_cache(maxsize=64)
def _head_strings(root: Path, head: str, rel: str) -> tuple[tuple[int, int], ...] | None:
    """The first and last lines of each string of HEAD's file that spans lines (f-strings
    and t-strings too, whose fields may hold comments); None when it does not parse."""
    try:
        tree = python_ast.parse(_at_head(root, head, rel))
    except (SyntaxError, ValueError, OSError, subprocess.SubprocessError, _NotAtHead):
        return None
    kinds = tuple(k for k in (ast.JoinedStr, getattr(ast, "TemplateStr", None)) if k)
    spans: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and not isinstance(node.value, (str, bytes)):
            continue
        if isinstance(node, (ast.Constant, *kinds)):
            first, last = node.lineno, node.end_lineno  # type: ignore[attr-defined]
            if last is not None and last > first:
                spans.append((first, last))
    return tuple(spans)


def _plain_comment(line: bytes) -> bool:
    """A blank line, or a whole-line comment that is no checker directive and reads as
    UTF-8 (a line that does not would fail to parse)."""
    text = line.strip()
    if not text:
        return True
    if not text.startswith(b"#") or _DIRECTIVE.search(text) or b"\0" in text:
        return False
    try:
        text.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _comment_lines_only(
    old: bytes, new: bytes, strings: tuple[tuple[int, int], ...] | None
) -> bool:
    """True when `new` differs from `old` (HEAD's, whose multi-line strings span `strings`)
    only by one run of whole-line comments and blank lines (see the module); False when the
    lines cannot tell (the trees are compared then)."""
    if strings is None:
        return False
    a, b = old.split(b"\n"), new.split(b"\n")
    if any(_CODING.match(line) for line in (*a[:2], *b[:2])):
        return False
    limit = min(len(a), len(b))
    lo = 0  # lines the same from the top
    while lo < limit and a[lo] == b[lo]:
        lo += 1
    tail = 0  # and from the bottom, not overlapping them
    while tail < limit - lo and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    if not all(_plain_comment(line) for line in (*a[lo : len(a) - tail], *b[lo : len(b) - tail])):
        return False
    if lo and a[lo - 1].rstrip(b"\r").endswith(b"\\"):
        return False  # a continued line would go on into the comment
    # HEAD's lines lo (1-based: the last one kept above) and len(a) - tail + 1 (the first
    # kept below) bound the run: no string may reach across it.
    above, below = lo, len(a) - tail + 1
    return not any(first < below and last > above for first, last in strings)


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
        line.strip() for line in source.splitlines() if b"#" in line and _DIRECTIVE.search(line)
    ]
    return tree, lines
