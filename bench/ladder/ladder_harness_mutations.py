"""Seeded single-line mutations of a project's source for the ladder harness.

Kinds: comparison flips (`==`/`!=`, `<`/`>=`, …, `is`/`is not`, `in`/`not in`), operator
flips (`+`/`-`, `*`/`//`, `and`/`or`), off-by-one integer constants, `True`/`False` swaps,
removed statements (a one-line statement becomes `pass`), swapped returns (`return X`
→ `return None`, or the negated boolean) and import-time constants (a string or integer
inside a module-level assignment — a table, a regex, a constant — changed: `"s"` → `"s~"`,
`n` → `n + 1`; the code that breaks runs at import, where a per-test recorder that starts
after collection sees nothing). Each candidate changes exactly one line, still
parses, and changes the module's AST (so no mutation is a no-op). Code under
`if TYPE_CHECKING:` and docstrings are left alone.
"""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Mutation", "apply", "choose"]

_CMP = {
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.Lt: ">=",
    ast.GtE: "<",
    ast.Gt: "<=",
    ast.LtE: ">",
    ast.Is: "is not",
    ast.IsNot: "is",
    ast.In: "not in",
    ast.NotIn: "in",
}
_BIN = {ast.Add: "-", ast.Sub: "+", ast.Mult: "//", ast.FloorDiv: "*", ast.Mod: "//"}
_SIMPLE = (ast.Assign, ast.AugAssign, ast.Expr, ast.Raise, ast.AnnAssign, ast.Delete)


@dataclass(frozen=True)
class Mutation:
    file: str
    """Path relative to the project root."""
    line: int
    kind: str
    before: str
    after: str

    @property
    def label(self) -> str:
        return f"{self.file}:{self.line} {self.kind}"


def _type_checking_lines(tree: ast.Module) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                out.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return out


def _docstring_lines(tree: ast.Module) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                out.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    return out


def _splice(line: str, start: int, end: int, text: str) -> str:
    raw = line.encode()
    return (raw[:start] + text.encode() + raw[end:]).decode()


def _between(line: str, left: ast.AST, right: ast.AST) -> tuple[int, int] | None:
    """Byte span of the operator between two operands on one line."""
    start, end = getattr(left, "end_col_offset", None), getattr(right, "col_offset", None)
    if start is None or end is None or start >= end:
        return None
    return start, end


def _edits(node: ast.AST, line: str) -> list[tuple[str, str]]:
    """(kind, new line) for one node on a one-line span."""
    out: list[tuple[str, str]] = []
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP:
        span = _between(line, node.left, node.comparators[0])
        if span is not None:
            new = _splice(line, *span, f" {_CMP[type(node.ops[0])]} ")
            out.append(("comparison flip", new))
    elif isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        span = _between(line, node.left, node.right)
        if span is not None:
            out.append(("operator flip", _splice(line, *span, f" {_BIN[type(node.op)]} ")))
    elif isinstance(node, ast.BoolOp) and len(node.values) == 2:
        span = _between(line, node.values[0], node.values[1])
        swap = " or " if isinstance(node.op, ast.And) else " and "
        if span is not None:
            out.append(("operator flip", _splice(line, *span, swap)))
    elif isinstance(node, ast.Constant) and type(node.value) in (int, bool):
        value = node.value
        assert isinstance(value, int)
        kind, text = (
            ("bool swap", str(not value)) if type(value) is bool else ("off-by-one", str(value + 1))
        )
        out.append((kind, _splice(line, node.col_offset, node.end_col_offset or 0, text)))
    elif isinstance(node, ast.Return) and node.value is not None:
        v = node.value
        if not (isinstance(v, ast.Constant) and v.value is None):
            text = "False" if isinstance(v, ast.Constant) and v.value is True else "None"
            out.append(("swapped return", _splice(line, v.col_offset, v.end_col_offset or 0, text)))
    if isinstance(node, _SIMPLE) and not isinstance(getattr(node, "value", None), ast.Constant):
        indent = line[: len(line) - len(line.lstrip())]
        out.append(("removed statement", indent + "pass"))
    return out


def _import_time(tree: ast.Module, lines: list[str], skip: set[int]) -> list[Mutation]:
    """Constants inside the module's own assignments (not in functions or classes)."""
    out: list[Mutation] = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.Assign | ast.AnnAssign) or stmt.value is None:
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if any(isinstance(t, ast.Name) and t.id.startswith("__") for t in targets):
            continue  # __all__, __version__: names, not data the code runs on
        for node in ast.walk(stmt.value):
            n = getattr(node, "lineno", 0)
            if not isinstance(node, ast.Constant) or n in skip or node.end_lineno != n:
                continue
            if isinstance(node.value, bool) or not isinstance(node.value, str | int):
                continue
            line = lines[n - 1]
            raw = line.encode()[node.col_offset : node.end_col_offset or 0].decode()
            try:
                if ast.literal_eval(raw) != node.value:
                    continue  # a part of an f-string or an implicit concatenation
            except (ValueError, SyntaxError):
                continue
            text = repr(node.value + "~") if isinstance(node.value, str) else str(node.value + 1)
            new = _splice(line, node.col_offset, node.end_col_offset or 0, text)
            out.append(Mutation("", n, "import-time constant", line, new))
    return out


def _candidates(rel: str, source: str) -> list[Mutation]:
    tree = ast.parse(source)
    lines = source.splitlines()
    skip = _type_checking_lines(tree) | _docstring_lines(tree)
    out: list[Mutation] = [
        Mutation(rel, m.line, m.kind, m.before, m.after) for m in _import_time(tree, lines, skip)
    ]
    for node in ast.walk(tree):
        n = getattr(node, "lineno", None)
        if n is None or n in skip or getattr(node, "end_lineno", n) != n:
            continue
        for kind, new in _edits(node, lines[n - 1]):
            if new != lines[n - 1]:
                out.append(Mutation(rel, n, kind, lines[n - 1], new))
    return out


def _valid(source: str, original: str, m: Mutation) -> bool:
    lines = source.splitlines(keepends=True)
    ending = lines[m.line - 1][len(m.before) :]
    lines[m.line - 1] = m.after + ending
    try:
        return ast.dump(ast.parse("".join(lines))) != original
    except SyntaxError:
        return False


def choose(root: Path, files: list[str], count: int, seed: int) -> list[Mutation]:
    """`count` mutations, spread over the kinds, chosen by `seed` (same seed, same list).

    Candidates are validated (parse, AST changed) only when drawn: a check per candidate
    parses the whole module, minutes for a project's every candidate."""
    by_kind: dict[str, list[Mutation]] = {}
    sources: dict[str, str] = {}
    for rel in sorted(files):
        sources[rel] = (root / rel).read_text(encoding="utf-8")
        for m in _candidates(rel, sources[rel]):
            by_kind.setdefault(m.kind, []).append(m)
    rng = random.Random(seed)
    for pool in by_kind.values():
        rng.shuffle(pool)
    dumps: dict[str, str] = {}
    picked: list[Mutation] = []
    kinds = sorted(by_kind)
    while len(picked) < count and any(by_kind.values()):
        for kind in kinds:
            while by_kind[kind] and len(picked) < count:
                m = by_kind[kind].pop()
                if m.file not in dumps:
                    dumps[m.file] = ast.dump(ast.parse(sources[m.file]))
                if _valid(sources[m.file], dumps[m.file], m):
                    picked.append(m)
                    break
    return picked


def apply(root: Path, m: Mutation) -> str:
    """Write the mutation; returns the original text (to restore)."""
    path = root / m.file
    original = path.read_text(encoding="utf-8")
    lines = original.splitlines(keepends=True)
    lines[m.line - 1] = m.after + lines[m.line - 1][len(m.before) :]
    path.write_text("".join(lines), encoding="utf-8")
    return original
