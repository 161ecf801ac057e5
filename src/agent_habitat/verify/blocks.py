"""A Python file as blocks: each function body on its own, and the skeleton (everything
that runs at import time: module and class bodies, `def` lines with their decorators,
defaults and annotations).

Hashes are of the AST (comments and formatting do not count). A function's hash covers
its body with nested function bodies cut out (they are blocks of their own), so a change
inside `wrapper` of a decorator changes `deco.<locals>.wrapper`, not `deco`. A change to
the skeleton changes what importing the module does: selection then falls back to the
import graph for that module.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FileBlocks", "changed_blocks", "file_blocks"]

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


@dataclass
class FileBlocks:
    skeleton: str
    blocks: dict[str, str] = field(default_factory=dict)
    """Block id (qualified name, `#2` for a second definition) → hash of its body."""
    starts: dict[int, str] = field(default_factory=dict)
    """A function's `def` line and decorator lines → its block id (a code object's
    first line)."""
    lines: dict[int, str] = field(default_factory=dict)
    """Each line inside a function → the innermost block (for lambdas, comprehensions)."""

    def block_at(self, line: int) -> str | None:
        """The block a code object starting at `line` belongs to; None: the skeleton."""
        return self.starts.get(line) or self.lines.get(line)

    def to_json(self) -> dict[str, Any]:
        return {"skeleton": self.skeleton, "blocks": self.blocks}


class _Dumper:
    def __init__(self) -> None:
        self.out = FileBlocks(skeleton="")
        self._taken: dict[str, int] = {}

    def _name(self, qual: str) -> str:
        n = self._taken.get(qual, 0) + 1
        self._taken[qual] = n
        return qual if n == 1 else f"{qual}#{n}"

    def dump(self, node: Any, prefix: str) -> str:
        if isinstance(node, _FUNCS):
            return self._function(node, prefix)
        if isinstance(node, ast.ClassDef):
            inner = prefix + node.name + "."
            parts = [
                f"{f}={self.dump(getattr(node, f, None), inner if f == 'body' else prefix)}"
                for f in node._fields
            ]
            return f"ClassDef({','.join(parts)})"
        if isinstance(node, ast.AST):
            fields = ",".join(self.dump(getattr(node, f, None), prefix) for f in node._fields)
            return f"{type(node).__name__}({fields})"
        if isinstance(node, list):
            return "[" + ",".join(self.dump(item, prefix) for item in node) + "]"
        return repr(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str) -> str:
        block = self._name(prefix + node.name)
        inner = prefix + node.name + ".<locals>."
        for line in (node.lineno, *(d.lineno for d in node.decorator_list)):
            self.out.starts.setdefault(line, block)
        # Inner functions are visited (and so assigned) after this one: innermost wins.
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            self.out.lines[line] = block
        self.out.blocks[block] = _digest(self.dump(node.body, inner))
        # What the enclosing code sees: the definition without its body.
        head = [f for f in node._fields if f != "body"]
        fields = ",".join(f"{f}={self.dump(getattr(node, f, None), prefix)}" for f in head)
        return f"{type(node).__name__}({fields})"


def file_blocks(source: bytes | str) -> FileBlocks | None:
    """The blocks of a module's source; None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    dumper = _Dumper()
    dumper.out.skeleton = _digest(dumper.dump(tree.body, ""))
    return dumper.out


def changed_blocks(old: dict[str, Any], new: FileBlocks) -> set[str] | None:
    """Blocks whose body differs between a stored `to_json()` and `new`; None when the
    skeleton differs (functions added, removed or re-declared count as skeleton changes)."""
    if old.get("skeleton") != new.skeleton:
        return None
    before: dict[str, str] = old.get("blocks", {})
    if set(before) != set(new.blocks):
        return None
    return {name for name, digest in new.blocks.items() if before[name] != digest}
