"""Whether an edit of a Python file is only whole-line comments and blank lines, told from
its lines: one run of them added, removed or changed, none a checker directive (`# mypy:`,
`# type:` ...), none inside one of the old file's multi-line strings nor after a line
continued by a backslash, and no coding declaration in the first two lines. The tokens are
then the old file's, so its tree and its compiled code are too, without parsing the new
file (compiling a 1,000-line module to compare its code blocks took 80 ms of a comment's
verify at load 40). When the lines cannot tell, the caller compares trees or code."""

from __future__ import annotations

import ast
import re

from . import python_ast

__all__ = ["CODING", "DIRECTIVE", "comment_lines_only", "string_spans"]

DIRECTIVE = re.compile(rb"\b(?:mypy|pyright|basedpyright|pyrefly|ty|type)\s*:|pyre-")
"""A checker directive in a comment."""
CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=]")
"""PEP 263's declaration (in the first two lines): moving or changing it changes how the
file is read."""


def string_spans(source: bytes) -> tuple[tuple[int, int], ...] | None:
    """The first and last lines of each string of `source` that spans lines (f-strings and
    t-strings too, whose fields may hold comments); None when it does not parse."""
    try:
        tree = python_ast.parse(source)
    except (SyntaxError, ValueError):
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
    if not text.startswith(b"#") or DIRECTIVE.search(text) or b"\0" in text:
        return False
    try:
        text.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def comment_lines_only(old: bytes, new: bytes, strings: tuple[tuple[int, int], ...] | None) -> bool:
    """True when `new` differs from `old` (HEAD's, whose multi-line strings span `strings`)
    only by one run of whole-line comments and blank lines (see the module); False when the
    lines cannot tell (the trees are compared then)."""
    if strings is None:
        return False
    a, b = old.split(b"\n"), new.split(b"\n")
    if any(CODING.match(line) for line in (*a[:2], *b[:2])):
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
