"""Per-test dependency data: recorded while `test.full` runs, read by test selection.

`test.full` runs pytest with the `habitat_testdeps` plugin (a standalone file put on
PYTHONPATH for that process only; nothing is installed into the project's environment).
Afterwards `Recording.finish` folds the plugin's output into one store in the workspace
state folder, keyed to content: for every package file its sha256 and block hashes at the
time of the run, for every test-side file its sha256, the HEAD commit and the dirty files.
Selection trusts a file's data only while its content still matches (see selection.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..regular import open_regular, read_regular
from ..workspace import write_private
from .blocks import FileBlocks, file_blocks
from .layout import Layout
from .snapshot import Snapshot

__all__ = ["PLUGIN_DIR", "RecordedDeps", "Recording", "deps_store_dir", "load_testdeps"]

PLUGIN_DIR = Path(__file__).resolve().parent / "testdeps_plugin"
_VERSION = 2  # 2: block hashes of compiled code (blocks.py)
_STORE = "deps.json"


def deps_store_dir(state_dir: Path) -> Path:
    return state_dir / "testdeps"


def sha256_of(path: Path) -> str | None:
    try:
        with open_regular(path) as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


@dataclass
class RecordedDeps:
    """The store as selection reads it."""

    head: str | None
    dirty: dict[str, str]
    files: dict[str, dict[str, Any]]
    """Package file → {"sha", "skeleton", "blocks"} at recording time."""
    side: dict[str, str]
    """Test-side file → sha256 at recording time."""
    tests: list[str]
    index: dict[str, dict[str, list[int]]]
    """Package file → block → indices into `tests` that ran it (fixtures included)."""
    imports: dict[str, list[str]]
    """Package file → blocks that ran at import time (their change selects every importer)."""
    modules: dict[str, dict[str, list[str]]]
    """Test-side file → package file → blocks its module body ran."""
    recorded_at: str = ""
    notes: list[str] = field(default_factory=list)


def load_testdeps(directory: Path) -> RecordedDeps | None:
    try:
        data = json.loads((directory / _STORE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != _VERSION:
        return None
    return RecordedDeps(
        head=data["head"],
        dirty=data["dirty"],
        files=data["files"],
        side=data["side"],
        tests=data["tests"],
        index=data["index"],
        imports=data["imports"],
        modules=data["modules"],
        recorded_at=data.get("recorded_at", ""),
    )


@dataclass
class _Merged:
    hashes: dict[str, str] = field(default_factory=dict)
    conflicts: set[str] = field(default_factory=set)
    imports: set[tuple[str, int]] = field(default_factory=set)
    modules: dict[str, set[tuple[str, int]]] = field(default_factory=dict)
    fixtures: dict[str, set[tuple[str, int]]] = field(default_factory=dict)
    tests: dict[str, dict[str, Any]] = field(default_factory=dict)
    broken: list[str] = field(default_factory=list)
    backend: str = ""


def _pairs(items: list[list[Any]]) -> set[tuple[str, int]]:
    return {(str(rel), int(line)) for rel, line in items}


def _node_id(root: Path, rootdir: Path, nodeid: str) -> str:
    path, sep, rest = nodeid.partition("::")
    try:
        rel = (rootdir / path).resolve().relative_to(root).as_posix()
    except ValueError:
        return nodeid
    return rel + sep + rest


def _merge(root: Path, outputs: list[Path]) -> _Merged:
    merged = _Merged()
    for path in outputs:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("broken"):
            merged.broken.append(str(data["broken"]))
        rootdir = Path(data.get("rootdir") or root)
        merged.backend = str(data.get("backend", ""))
        for rel, digest in data["hashes"].items():
            if merged.hashes.setdefault(rel, digest) != digest:
                merged.conflicts.add(rel)
        merged.imports |= _pairs(data["imports"])
        for rel, items in data["modules"].items():
            merged.modules.setdefault(rel, set()).update(_pairs(items))
        for name, items in data["fixtures"].items():
            merged.fixtures.setdefault(name, set()).update(_pairs(items))
        for nodeid, entry in data["tests"].items():
            merged.tests[_node_id(root, rootdir, nodeid)] = entry
    return merged


@dataclass
class Recording:
    """One instrumented full run: `args` and `env` for pytest, then `finish()`."""

    root: Path
    layout: Layout
    state_dir: Path
    snapshot: Snapshot
    out_dir: Path = field(init=False)

    def __post_init__(self) -> None:
        self.out_dir = deps_store_dir(self.state_dir) / f"run-{os.getpid()}-{id(self):x}"
        shutil.rmtree(self.out_dir, ignore_errors=True)

    @property
    def args(self) -> list[str]:
        return ["-p", "habitat_testdeps"]

    def env(self) -> dict[str, str]:
        path = [str(PLUGIN_DIR), *filter(None, [os.environ.get("PYTHONPATH")])]
        return {
            "PYTHONPATH": os.pathsep.join(path),
            "HABITAT_TESTDEPS_OUT": str(self.out_dir),
            "HABITAT_TESTDEPS_ROOT": str(self.root),
            "HABITAT_TESTDEPS_PACKAGES": os.pathsep.join(
                str(p) for p in self.layout.packages.values()
            ),
        }

    def finish(self, complete: bool) -> str:
        """Fold the run's output into the store (blocking); a note for the rung's result.
        An incomplete run (pytest crashed, was killed, or the plugin failed) keeps the old
        store: its data is still checked against content before use."""
        try:
            outputs = sorted(self.out_dir.glob("deps-*.json"))
            if not complete or not outputs:
                return "test dependencies not recorded (the run did not complete)"
            merged = _merge(self.root, outputs)
            if merged.broken:
                return f"test dependencies not recorded: the recorder failed ({merged.broken[0]})"
            payload = self._payload(merged)
            target = deps_store_dir(self.state_dir) / _STORE
            write_private(target, json.dumps(payload))
            return (
                f"recorded test dependencies of {len(payload['tests'])} tests "
                f"({payload['backend']}) for selection"
            )
        finally:
            shutil.rmtree(self.out_dir, ignore_errors=True)

    def _payload(self, merged: _Merged) -> dict[str, Any]:
        files: dict[str, dict[str, Any]] = {}
        tables: dict[str, FileBlocks] = {}
        for pkg_dir in self.layout.packages.values():
            for path in sorted(pkg_dir.rglob("*.py")):
                rel = self.layout.rel(path)
                digest = sha256_of(path)
                seen = merged.hashes.get(rel)
                if digest is None or rel in merged.conflicts or seen not in (None, digest):
                    continue  # changed while the suite ran: no data for it (selection widens)
                blocks = file_blocks(read_regular(path))
                if blocks is None:
                    continue
                tables[rel] = blocks
                files[rel] = {"sha": digest, **blocks.to_json()}
        side: dict[str, str] = {}
        for rel, path in self.layout.side_files.items():
            digest = sha256_of(path)
            seen = merged.hashes.get(rel)
            if digest is not None and rel not in merged.conflicts and seen in (None, digest):
                side[rel] = digest

        def blocks_of(keys: set[tuple[str, int]]) -> dict[str, set[str]]:
            out: dict[str, set[str]] = {}
            for rel, line in keys:
                table = tables.get(rel)
                block = table.block_at(line) if table is not None else None
                if block is not None:
                    out.setdefault(rel, set()).add(block)
            return out

        tests = sorted(merged.tests)
        index: dict[str, dict[str, list[int]]] = {}
        for i, nodeid in enumerate(tests):
            entry = merged.tests[nodeid]
            keys = _pairs(entry.get("codes", []))
            for name in entry.get("fixtures", []):
                keys |= merged.fixtures.get(name, set())
            for rel, names in blocks_of(keys).items():
                per_file = index.setdefault(rel, {})
                for block in names:
                    per_file.setdefault(block, []).append(i)
        return {
            "version": _VERSION,
            "backend": merged.backend,
            "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "head": self.snapshot.head,
            "dirty": self.snapshot.hashes,
            "files": files,
            "side": side,
            "tests": tests,
            "failed": [i for i, t in enumerate(tests) if merged.tests[t].get("failed")],
            "index": index,
            "imports": {rel: sorted(b) for rel, b in blocks_of(merged.imports).items()},
            "modules": {
                rel: {f: sorted(b) for f, b in blocks_of(keys).items()}
                for rel, keys in merged.modules.items()
            },
        }
