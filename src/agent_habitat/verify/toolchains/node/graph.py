"""The relative-import graph of a workspace's JS/TS sources, for the node test runner:
which test files import a touched file, however indirectly (vitest and jest find their
related tests themselves)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from .detect import IGNORES, SOURCE_SUFFIXES

__all__ = ["is_test_file", "related_tests", "test_files"]

_IMPORT = re.compile(
    r"""(?:\bimport\s*(?:[\w*{}\s,$]+\s*from\s*)?|\bexport\s*[\w*{}\s,$]*\s*from\s*|"""
    r"""\brequire\s*\(\s*|\bimport\s*\(\s*)["'](?P<spec>\.{1,2}/[^"'\n]*)["']"""
)
_SKIP = frozenset(IGNORES) | {".git"}
_TEST_DIRS = frozenset({"test", "tests", "__tests__"})
_JS_FOR_TS = {".js": (".ts", ".tsx"), ".mjs": (".mts",), ".cjs": (".cts",), ".jsx": (".tsx",)}


def is_test_file(rel: str) -> bool:
    path = PurePosixPath(rel)
    if not path.name.endswith(SOURCE_SUFFIXES):
        return False
    stem = path.name.split(".")
    return (
        "test" in stem[1:-1]
        or "spec" in stem[1:-1]
        or path.name.startswith("test.")
        or bool(_TEST_DIRS & set(path.parts[:-1]))
    )


def _sources(top: Path) -> list[Path]:
    out: list[Path] = []
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d not in _SKIP and not d.startswith(".")]
        out.extend(Path(folder) / f for f in files if f.endswith(SOURCE_SUFFIXES))
    return out


def _resolve(base: Path, spec: str) -> Path | None:
    target = (base.parent / spec).resolve()
    candidates = [target]
    stem, dot, ext = target.name.rpartition(".")
    if dot and f".{ext}" in _JS_FOR_TS:  # TypeScript's `./a.js` meaning `./a.ts`
        candidates += [target.with_name(stem + alt) for alt in _JS_FOR_TS[f".{ext}"]]
    candidates += [target.with_name(target.name + s) for s in SOURCE_SUFFIXES]
    candidates += [target / f"index{s}" for s in SOURCE_SUFFIXES]
    return next((c for c in candidates if c.is_file()), None)


def _imports(path: Path) -> list[Path]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [p for m in _IMPORT.finditer(text) if (p := _resolve(path, m["spec"])) is not None]


def test_files(root: Path, top: Path) -> list[str]:
    """The test files under `top`, relative to `root`."""
    return sorted(rel for p in _sources(top) if is_test_file(rel := p.relative_to(root).as_posix()))


def related_tests(root: Path, top: Path, touched: Iterable[str]) -> dict[str, str]:
    """Test file (relative to `root`) → why it is selected: it is touched, or it imports a
    touched file through relative imports."""
    root = root.resolve()
    changed = {(root / rel).resolve() for rel in touched}
    files = _sources(top.resolve())
    graph = {f: _imports(f) for f in files}
    reached: dict[Path, str] = {}
    for test in files:
        rel = test.relative_to(root).as_posix()
        if not is_test_file(rel):
            continue
        if test in changed:
            reached[test] = f"{rel} is touched"
            continue
        seen: set[Path] = set()
        stack = [test]
        while stack:
            node = stack.pop()
            for dep in graph.get(node, []):
                if dep in changed:
                    reached[test] = f"{rel} imports {dep.relative_to(root).as_posix()}"
                    stack = []
                    break
                if dep not in seen:
                    seen.add(dep)
                    stack.append(dep)
    return {t.relative_to(root).as_posix(): why for t, why in sorted(reached.items())}
