"""What a long-lived process (the host, an MCP server) keeps between climbs for test
selection: the packages' import graph and the recorded test dependencies.

A one-shot `habitat verify` builds both once and exits; a server would rebuild them on
every climb (grimp re-reads its cache for every module, the dependency store is re-parsed).
The memo hands back the same objects while they are still true:

* the graph, while the set of package files is the same and every file whose size or
  mtime moved still has the same import statements (the graph is a function of those
  alone). The imports of every file are read when the graph is built, so a change is
  compared with what the graph was built from, never with a guess;
* the dependency store, while its file's size and mtime are the same;
* the test-side imports (side_graph.py), read from their disk cache once.

The warm-up on project open fills it; the runner hands it to every climb (`LadderHooks`).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...regular import read_regular
from .named_imports import NAMED
from .side_graph import SideImports

if TYPE_CHECKING:
    import grimp

    from .testdeps import RecordedDeps

__all__ = ["SelectionMemo", "import_lines"]

Stat = tuple[int, int]


def _stat(path: Path) -> Stat | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _package_files(packages: dict[str, Path]) -> dict[Path, Stat]:
    out: dict[Path, Stat] = {}
    for top in packages.values():
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
            for name in files:
                if name.endswith((".py", ".pyi")):
                    path = Path(folder, name)
                    stat = _stat(path)
                    if stat is not None:
                        out[path] = stat
    return out


_IMPORT_WORD = re.compile(rb"\bimport\b")


def import_lines(path: Path) -> frozenset[bytes] | None:
    """A fingerprint of the file's import statements, read as text (a parse of a big module
    costs tens of milliseconds, on every climb that finds it moved): every line holding
    the word `import`, the lines of a bracket opened on one, and every line a backslash
    continues and the one it continues into (`from x \\` on one line, `import y` on the
    next). Any change to an import statement changes one
    of them; a change to such a line that is not an import (a comment, a string) only
    costs a rebuild. None when the file cannot be read (then the graph is rebuilt)."""
    try:
        lines = read_regular(path).splitlines()
    except OSError:
        return None
    kept: set[bytes] = set()
    depth = 0
    carried = False
    for line in lines:
        continued = line.rstrip().endswith(b"\\")
        if depth > 0 or carried or continued or _IMPORT_WORD.search(line) or NAMED.search(line):
            kept.add(line.strip())
            if depth > 0 or _IMPORT_WORD.search(line):
                depth = max(0, depth + line.count(b"(") - line.count(b")"))
        carried = continued
    return frozenset(kept)


@dataclass
class _GraphEntry:
    graph: grimp.ImportGraph
    stats: dict[Path, Stat]
    imports: dict[Path, frozenset[bytes] | None]


@dataclass
class SelectionMemo:
    """Per process; thread-safe (climbs compute selection in worker threads)."""

    _graphs: dict[tuple[object, ...], _GraphEntry] = field(default_factory=dict)
    _deps: dict[Path, tuple[Stat, RecordedDeps | None]] = field(default_factory=dict)
    _side: dict[Path, SideImports] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _building: dict[tuple[object, ...], threading.Lock] = field(default_factory=dict)
    builds: int = 0
    """How many times a graph was built (the warm-up test reads it)."""

    def graph(
        self,
        packages: dict[str, Path],
        cache_dir: Path,
        build: Callable[[], grimp.ImportGraph],
    ) -> grimp.ImportGraph:
        key = (tuple(sorted((k, str(v)) for k, v in packages.items())), str(cache_dir))
        stats = _package_files(packages)
        with self._lock:
            building = self._building.setdefault(key, threading.Lock())
        # One build of a graph at a time: a climb that asks while the warm-up builds it
        # waits for that build and takes it, instead of building it a second time beside.
        with building:
            with self._lock:
                entry = self._graphs.get(key)
            if entry is not None and self._still_true(entry, stats):
                return entry.graph
            graph = build()
            imports = {path: import_lines(path) for path in stats}
            with self._lock:
                self._graphs[key] = _GraphEntry(graph, stats, imports)
                self.builds += 1
        return graph

    @staticmethod
    def _still_true(entry: _GraphEntry, stats: dict[Path, Stat]) -> bool:
        if stats.keys() != entry.stats.keys():
            return False  # a module appeared or went away
        moved = [p for p, st in stats.items() if entry.stats[p] != st]
        for path in moved:
            before = entry.imports.get(path)
            if before is None or import_lines(path) != before:
                return False
        for path in moved:
            entry.stats[path] = stats[path]
        return True

    def deps(
        self, directory: Path, load: Callable[[Path], RecordedDeps | None]
    ) -> RecordedDeps | None:
        store = directory / "deps.json"
        stat = _stat(store)
        with self._lock:
            hit = self._deps.get(store)
        if hit is not None and stat is not None and hit[0] == stat:
            return hit[1]
        deps = load(directory)
        if stat is not None:
            with self._lock:
                self._deps[store] = (stat, deps)
        return deps

    def side_imports(self, cache_dir: Path) -> SideImports:
        """The test-side import cache, read from disk once per process."""
        with self._lock:
            if cache_dir not in self._side:
                self._side[cache_dir] = SideImports(cache_dir)
            return self._side[cache_dir]

    def warm(self) -> dict[str, int]:
        """How much is kept: graphs and dependency stores."""
        with self._lock:
            return {"graphs": len(self._graphs), "deps": len(self._deps)}
