"""Python source parsed into `ast` objects, one build at a time in this process.

CPython 3.11 keeps the AST constructor's recursion counter in one state per interpreter, not
per thread (python/cpython#106905): when a garbage collection during one thread's build runs
Python code (a `gc` callback, a finalizer), another thread may take the GIL and build a tree
of its own, which resets the counter, and the first build ends in `SystemError: AST
constructor recursion depth mismatch`. The habitat parses on several worker threads at once
(diagnose.files' syntax check beside compile.project's comment check and the selection's
import scan): a verify of glom 25.12.0's 2,600-line `core.py` came back as `diagnose.files
error: internal error: ... SystemError(...)`. So every build of `ast` objects in the habitat
goes through `parse`, under one lock. Compiling source to a code object builds none and needs
no lock."""

from __future__ import annotations

import ast
import threading

__all__ = ["parse"]

_LOCK = threading.Lock()


def parse(
    source: str | bytes, filename: str = "<unknown>", *, type_comments: bool = False
) -> ast.Module:
    """`ast.parse(source, filename)`, never beside another build of this process."""
    with _LOCK:
        return ast.parse(source, filename, type_comments=type_comments)
