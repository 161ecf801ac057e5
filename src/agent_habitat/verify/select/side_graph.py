"""What each test-side file (test, conftest, helper outside the packages) imports, for
test selection: read with `ast`, kept on disk per file (size, mtime, the package its
relative imports resolve against), so a climb parses only the files that changed since.

Parsing every test file of a project on every climb cost seconds on suites with large test
modules (packaging: 39 files, 6.5 s on a loaded machine); read from the cache it is a stat
per file. Only statements are visited: an import is always a statement.
"""

from __future__ import annotations

import ast
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...regular import read_regular
from ...workspace import write_private
from .. import python_ast
from ..layout import Layout

__all__ = ["SideImports", "imported_names", "side_graph", "side_names"]

_VERSION = 1
_FILE = "side-imports.json"


def _statements(tree: ast.AST) -> Iterator[ast.AST]:
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                yield child
                stack.append(child)


def imported_names(tree: ast.AST, own_package: str) -> set[str]:
    names: set[str] = set()
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = own_package.split(".") if own_package else []
                parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join([*parts, base] if base else parts)
            if base:
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _doctest_imports(text: str, rel: str) -> set[str]:
    """What a doctest text file's examples import (an example that does not parse, say a
    continuation doctest itself rejects, imports nothing)."""
    import doctest  # here: it imports unittest, pdb and more, for a project's doctest files only

    names: set[str] = set()
    for example in doctest.DocTestParser().get_examples(text, rel):
        try:
            names |= imported_names(python_ast.parse(example.source, rel), "")
        except (SyntaxError, ValueError):
            continue
    return names


def side_names(layout: Layout, rel: str) -> tuple[list[str], str]:
    """Names a test-side file is importable as (pytest's rootdir-relative and basedir-
    relative forms), and the package its relative imports resolve against."""
    path = layout.root / rel
    parts = list(Path(rel).with_suffix("").parts)
    base = path.parent
    while (base / "__init__.py").is_file() and base != layout.root:
        base = base.parent
    local = list(path.relative_to(base).with_suffix("").parts)
    own = ".".join(local[:-1])
    if local[-1] == "__init__":
        local.pop()
    if parts[-1] == "__init__":
        parts.pop()
    return sorted({".".join(local), ".".join(parts)} - {""}), own


class SideImports:
    """The on-disk cache of test-side imports (one JSON file in the grimp cache folder)."""

    def __init__(self, cache_dir: Path) -> None:
        self.file = cache_dir / _FILE
        self._lock = threading.Lock()
        self._dirty = False
        self._entries: dict[str, dict[str, Any]] = {}
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("version") == _VERSION:
                self._entries = data["files"]
        except (OSError, ValueError, KeyError):
            pass

    def names(self, rel: str, path: Path, own: str) -> set[str]:
        try:
            st = path.stat()
        except OSError:
            return set()
        key = [st.st_mtime_ns, st.st_size, own]
        with self._lock:
            entry = self._entries.get(rel)
        if entry is not None and entry.get("key") == key:
            return set(entry["names"])
        try:
            source = read_regular(path, rel)
            if rel.endswith(".py"):
                found = imported_names(python_ast.parse(source, rel), own)
            else:
                found = _doctest_imports(source.decode("utf-8", "replace"), rel)
        except (SyntaxError, ValueError, OSError):
            return set()  # not cached: read again once it parses
        with self._lock:
            self._entries[rel] = {"key": key, "names": sorted(found)}
            self._dirty = True
        return found

    def save(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            data = json.dumps({"version": _VERSION, "files": self._entries})
            self._dirty = False
        try:
            write_private(self.file, data)
        except OSError:
            pass  # a cache: the next climb parses again


def side_graph(layout: Layout, cache: SideImports) -> tuple[dict[str, set[str]], dict[str, str]]:
    """For each test-side file (doctest text files too) and single-file module: the names it
    imports; and the index name → file (a test reaches a single-file module by its name, as
    it does a helper)."""
    imports: dict[str, set[str]] = {}
    index: dict[str, str] = {}
    files = dict(layout.side_files)
    files.update(layout.doctest_files)
    files.update((layout.rel(p), p) for p in layout.modules.values())
    for rel, path in files.items():
        names, own = side_names(layout, rel)
        for name in names:
            index.setdefault(name, rel)
        imports[rel] = cache.names(rel, path, own)
    cache.save()
    return imports, index
