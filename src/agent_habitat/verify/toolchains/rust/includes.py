"""Which crates read a touched file through a macro, wherever the file lives: a member whose
doc is the workspace's README (`#![doc = include_str!("../../README.md")]`), test data read
with `include_bytes!`, code pulled in with `include!` or a `#[path]` module. The folder a
file lies in names one crate; these name the others, so an edit to that README runs the
doc tests it holds.

Read from the sources, not from a build: a path given as a literal (relative to the file
that names it, as rustc resolves it) or joined to the crate's folder
(`concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")`). A path built any other way is not
followed."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Collection, Iterator
from pathlib import Path

from .metadata import CrateGraph

__all__ = ["readers"]

_MACRO = re.compile(
    r"\binclude(?:_str|_bytes)?!\s*\(\s*"
    r"(?P<manifest>concat!\s*\(\s*env!\s*\(\s*\"CARGO_MANIFEST_DIR\"\s*\)\s*,\s*)?"
    r"\"(?P<path>[^\"]+)\""
)
_PATH_ATTR = re.compile(r"#\[\s*path\s*=\s*\"(?P<path>[^\"]+)\"\s*\]")
_SKIP_DIRS = frozenset({"target", "node_modules"})


def _sources(root: Path) -> Iterator[str]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
        for name in files:
            if name.endswith(".rs"):
                yield Path(folder, name).relative_to(root).as_posix()


def _named(text: str, rel: str, crate_dir: str) -> Iterator[str]:
    """Each path the source reads, relative to the project root."""
    here = posixpath.dirname(rel)
    for m in _MACRO.finditer(text):
        path = m["path"]
        if m["manifest"]:
            yield posixpath.normpath(posixpath.join(crate_dir, path.lstrip("/")))
        elif not posixpath.isabs(path):
            yield posixpath.normpath(posixpath.join(here, path))
    for m in _PATH_ATTR.finditer(text):
        if not posixpath.isabs(m["path"]):
            yield posixpath.normpath(posixpath.join(here, m["path"]))


def readers(root: Path, graph: CrateGraph, touched: Collection[str]) -> dict[str, list[str]]:
    """Touched file → the crates, other than its own, whose sources include it (blocking:
    reads the workspace's `.rs` files that name a macro of the kind)."""
    wanted = set(touched)
    found: dict[str, set[str]] = {}
    for rel in _sources(root):
        crate = graph.crate_of(rel)
        if crate is None:
            continue
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "include" not in text and "path" not in text:
            continue
        for path in _named(text, rel, crate.dir):
            owner = graph.crate_of(path)
            if path in wanted and (owner is None or owner.name != crate.name):
                found.setdefault(path, set()).add(crate.name)
    return {path: sorted(names) for path, names in found.items()}
