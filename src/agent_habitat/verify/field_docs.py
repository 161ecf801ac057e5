"""Models whose fields are described by the docstring below each field.

pydantic's `use_attribute_docstrings` finds a class's source at its creation by walking the
frames, tokenizes its block in Python and parses it: for the verify report's 13 models that
was about 75M instructions of every `habitat status` (python -c pass is 40M), before any
model was used. Here each class's block is cut from its module's lines and parsed alone (the
whole module, 1,100 lines for those 13, would cost 60M), its docstrings taken the way pydantic
takes them (a string right after an annotated name, `inspect.cleandoc`ed; a test keeps them
pydantic's), and the model is built on first use (`defer_build`): the descriptions are in
place before any schema is, so the JSON schemas are the same.
"""

from __future__ import annotations

import ast
import inspect
import sys
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from . import python_ast

__all__ = ["DocumentedModel", "attribute_docs"]


class DocumentedModel(BaseModel):
    """A model built on first use, its fields described by their attribute docstrings."""

    model_config = ConfigDict(defer_build=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        docs = attribute_docs(cls)
        for name, field in cls.__pydantic_fields__.items():
            if field.description is None and name in docs:
                field.description = docs[name]


def attribute_docs(cls: type) -> dict[str, str]:
    """The docstrings below the fields of `cls`, a class at the top of its module ({}
    without its source, as pydantic finds none then)."""
    lines = _lines(cls.__module__)
    head = (f"class {cls.__qualname__}(", f"class {cls.__qualname__}:")
    start = next((i for i, line in enumerate(lines) if line.startswith(head)), None)
    if start is None:
        return {}
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t)"):
        end += 1
    try:
        block = python_ast.parse("".join(lines[start:end])).body
    except SyntaxError:  # a string in the body at the margin: the whole module, then
        block = python_ast.parse("".join(lines)).body
        block = [node for node in block if getattr(node, "name", None) == cls.__qualname__]
    node = block[0] if block else None
    return _docstrings(node) if isinstance(node, ast.ClassDef) else {}


@cache
def _lines(module: str) -> list[str]:
    path = getattr(sys.modules.get(module), "__file__", None)
    if path is None:
        return []
    try:
        with open(path, encoding="utf-8") as source:
            return source.readlines()
    except (OSError, UnicodeDecodeError):
        return []


def _docstrings(node: ast.ClassDef) -> dict[str, str]:
    # pydantic's DocstringVisitor: a string statement right after an annotated assignment.
    docs: dict[str, str] = {}
    previous: ast.stmt | None = None
    for statement in node.body:
        if (
            isinstance(previous, ast.AnnAssign)
            and isinstance(previous.target, ast.Name)
            and isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        ):
            docs[previous.target.id] = inspect.cleandoc(statement.value.value)
        previous = statement
    return docs
