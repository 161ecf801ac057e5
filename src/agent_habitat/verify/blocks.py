"""A Python file as blocks: each function body on its own, and the skeleton (everything
that runs at import time: module and class bodies, `def` lines with their decorators,
defaults and annotations).

Hashes are of the compiled code (bytecode, constants, names), not of the text: comments,
formatting and line numbers do not count. The file is compiled once by CPython (C speed);
walking an `ast` tree in Python to hash it was the dominant cost of test selection (most of
a selection's time went into hashing the one touched module). A function's hash covers its
body with nested function bodies cut out (they are blocks of their own), so a change inside
`wrapper` of a decorator changes `deco.<locals>.wrapper`, not `deco`. Lambdas,
comprehensions and class bodies are part of the block (or skeleton) around them. A change to
the skeleton changes what importing the module does: selection then falls back to the
import graph for that module.

Hashes depend on the interpreter that compiles (the habitat's own): data recorded under
another version only ever looks changed, which widens selection, never narrows it.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

__all__ = ["FileBlocks", "changed_blocks", "file_blocks"]

# A `def` (or `async def`) compiles to a code object with fresh locals and a real name;
# lambdas and comprehensions have names like `<lambda>`, class bodies no fresh locals.
_CO_NEWLOCALS = 0x2
_VERSION_TAG = f"{sys.implementation.cache_tag}\n".encode()


@dataclass
class FileBlocks:
    skeleton: str
    blocks: dict[str, str] = field(default_factory=dict)
    """Block id (qualified name, `#2` for a second definition) → hash of its body."""
    starts: dict[int, str] = field(default_factory=dict)
    """A function's first line (its first decorator's, as `co_firstlineno`) → its block id."""
    lines: dict[int, str] = field(default_factory=dict)
    """Each line inside a function → the innermost block (for lambdas, comprehensions)."""

    def block_at(self, line: int) -> str | None:
        """The block a code object starting at `line` belongs to; None: the skeleton."""
        return self.starts.get(line) or self.lines.get(line)

    def to_json(self) -> dict[str, Any]:
        return {"skeleton": self.skeleton, "blocks": self.blocks}


def _is_def(code: CodeType) -> bool:
    return bool(code.co_flags & _CO_NEWLOCALS) and not code.co_name.startswith("<")


def _signature(code: CodeType) -> bytes:
    """What the enclosing code sees of a nested `def`: its name, parameters and kind."""
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & 0x4) + bool(code.co_flags & 0x8)  # *args, **kwargs
    names = ",".join(code.co_varnames[:n])
    return f"def {code.co_name}({names}) {code.co_posonlyargcount} {code.co_flags}".encode()


def _const(value: object, out: list[bytes], walker: _Walker, owner: str) -> None:
    if isinstance(value, CodeType):
        if _is_def(value):
            out.append(_signature(value))
            walker.visit_def(value, owner)
        else:
            walker.fold(value, out, owner)
    elif isinstance(value, tuple):
        out.append(b"(")
        for item in value:
            _const(item, out, walker, owner)
        out.append(b")")
    elif isinstance(value, frozenset):
        # Set iteration order follows string hashing, which is randomised per process.
        out.append(b"{" + b",".join(sorted(repr(v).encode() for v in value)) + b"}")
    else:
        out.append(f"{type(value).__name__}:{value!r}".encode("utf-8", "surrogatepass"))


class _Walker:
    def __init__(self) -> None:
        self.out = FileBlocks(skeleton="")
        self._taken: dict[str, int] = {}

    def _name(self, qual: str) -> str:
        n = self._taken.get(qual, 0) + 1
        self._taken[qual] = n
        return qual if n == 1 else f"{qual}#{n}"

    def fold(self, code: CodeType, out: list[bytes], owner: str) -> None:
        """Append `code` (and the non-`def` code inside it) to the payload of `owner`
        (a block id, or "" for the skeleton); nested `def`s become blocks of their own."""
        out.append(
            f"{code.co_name} {code.co_argcount} {code.co_posonlyargcount} "
            f"{code.co_kwonlyargcount} {code.co_flags}\n".encode()
        )
        out.append(" ".join((*code.co_names, "|", *code.co_varnames)).encode())
        out.append(" ".join((*code.co_freevars, "|", *code.co_cellvars)).encode())
        out.append(code.co_code)
        out.append(getattr(code, "co_exceptiontable", b""))
        if owner and code.co_firstlineno not in self.out.starts:
            self.out.lines[code.co_firstlineno] = owner
        for value in code.co_consts:
            _const(value, out, self, owner)

    def visit_def(self, code: CodeType, parent: str) -> None:
        block = self._name(code.co_qualname)
        self.out.starts.setdefault(code.co_firstlineno, block)
        # Every line of the function belongs to it until a nested `def` (visited after
        # this one, from inside `fold`) claims its own: innermost wins.
        last = max((line for *_, line in code.co_lines() if line is not None), default=0)
        for line in range(code.co_firstlineno, last + 1):
            self.out.lines[line] = block
        payload: list[bytes] = [_VERSION_TAG]
        self.fold(code, payload, block)
        self.out.blocks[block] = _digest(payload)


def _digest(parts: list[bytes]) -> str:
    return hashlib.blake2b(b"\0".join(parts), digest_size=12).hexdigest()


def file_blocks(source: bytes | str) -> FileBlocks | None:
    """The blocks of a module's source; None when it does not compile."""
    try:
        module = compile(source, "<blocks>", "exec", dont_inherit=True, optimize=0)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    walker = _Walker()
    payload: list[bytes] = [_VERSION_TAG]
    walker.fold(module, payload, "")
    walker.out.skeleton = _digest(payload)
    return walker.out


def changed_blocks(old: dict[str, Any], new: FileBlocks) -> set[str] | None:
    """Blocks whose body differs between a stored `to_json()` and `new`; None when the
    skeleton differs (functions added, removed or re-declared count as skeleton changes)."""
    if old.get("skeleton") != new.skeleton:
        return None
    before: dict[str, str] = old.get("blocks", {})
    if set(before) != set(new.blocks):
        return None
    return {name for name, digest in new.blocks.items() if before[name] != digest}
