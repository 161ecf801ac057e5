"""Imports by name: a package module that names another module of the project's packages in a
string literal imports it, as far as selection is concerned.

A plugin table or a lazy loader imports by dotted name at run time (mistune 3.0.2's
`plugins/__init__.py`: `'strikethrough': 'mistune.plugins.formatting.strikethrough'`, loaded
with `import_string`), which grimp's graph of `import` statements does not see: a change of
`plugins/formatting.py` affected no test by the graph, while the suite's plugin tests ran
it and failed. Each such literal (`'pkg.mod'`, `'pkg.mod.attr'`, `'pkg.mod:attr'`) adds an
import of the longest module it names from the module that holds it. A literal that is no
import (a docstring's example) only selects more tests, never fewer.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...regular import read_regular

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    import grimp  # the graph's type only: the memo reads NAMED without loading grimp

__all__ = ["NAMED", "add_named_imports"]

NAMED = re.compile(rb"""['"][A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?::[\w.]+)?['"]""")
"""A quoted dotted name: what a line must hold to name a module (memo.py keeps such lines in
a module's fingerprint, so a changed one rebuilds the graph)."""


def _file_of(module: str, packages: dict[str, Path]) -> Path | None:
    top, *rest = module.split(".")
    folder = packages.get(top)
    if folder is None:
        return None
    base = folder.joinpath(*rest)
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def add_named_imports(graph: grimp.ImportGraph, packages: dict[str, Path]) -> int:
    """Add to `graph` an import for each string literal of a package module that names
    another module of `packages`; how many were added."""
    if not packages:
        return 0
    modules = set(graph.modules)
    tops = b"|".join(re.escape(name.encode()) for name in sorted(packages, key=len, reverse=True))
    named = re.compile(rb"""['"]((?:%s)(?:\.[A-Za-z_]\w*)+)(?::[\w.]+)?['"]""" % tops)
    added = 0
    for module in sorted(modules):
        path = _file_of(module, packages)
        if path is None:
            continue
        try:
            text = read_regular(path)
        except OSError:
            continue
        for found in {m.group(1).decode("ascii") for m in named.finditer(text)}:
            target = found
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != module and target != module.split(".")[0]:
                graph.add_import(importer=module, imported=target)
                added += 1
    return added
