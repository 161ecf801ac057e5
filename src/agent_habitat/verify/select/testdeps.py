"""Per-test dependency data: recorded by every pytest run the ladder makes, read by selection.

Each test rung (`test.scoped`, whole suite or a subset, `test.full`) and the background
recording (recording.py) runs pytest with the `habitat_testdeps` plugin (a standalone
file put on PYTHONPATH for that process only; nothing is installed into the project's
environment). `Recording.finish` folds the plugin's output into one store in the workspace
state folder (deps_store.py), per test: the newest run of a test holds its record.

A run's record is keyed to content, not to a commit: for every project file the run
loaded, the sha256 it had (its blocks stored once per content, `blocks`), for every
test-side file its sha256. Selection trusts a test's record only where the files it
depended on still have that content, so a revert or a branch switch back finds its data
again (deps_selection.py).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...git_env import git_show
from ...regular import open_regular, read_regular
from ...workspace import private_dirs
from ..blocks import FileBlocks, changed_blocks, file_blocks
from ..deps_store import (
    RecordedDeps,
    RunScope,
    TestRun,
    deps_store_dir,
    load_testdeps,
    merge_run,
)
from ..layout import Layout
from ..snapshot import Snapshot

__all__ = [
    "PLUGIN_DIR",
    "RecordedDeps",
    "Recording",
    "RunScope",
    "TestRun",
    "deps_store_dir",
    "load_testdeps",
    "sha256_of",
]

PLUGIN_DIR = Path(__file__).resolve().parent / "testdeps_plugin"
UNKNOWN = "-"
"""The sha of a file that changed while the run read it: its data is never trusted."""


def sha256_of(path: Path) -> str | None:
    try:
        with open_regular(path) as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


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
    spawning: set[str] = field(default_factory=set)


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
        merged.spawning.update(data.get("spawning", []))
        for nodeid, entry in data["tests"].items():
            merged.tests[_node_id(root, rootdir, nodeid)] = entry
    return merged


@dataclass
class Recording:
    """One instrumented pytest run: `args` and `env` for pytest, then `finish()`.

    `scope` says what the run covered: the whole suite, or which test files it ran whole
    (the rest of its tests are a subset of their files)."""

    root: Path
    layout: Layout
    state_dir: Path
    snapshot: Snapshot
    scope: RunScope = field(default_factory=RunScope)
    passed_only: bool = False
    """Keep only the tests that passed (a run elsewhere than the working tree, HEAD's export:
    a test that failed or skipped there may have run less than it does here)."""
    out_dir: Path = field(init=False)
    _dropped: set[str] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self.out_dir = deps_store_dir(self.state_dir) / f"run-{os.getpid()}-{id(self):x}"
        shutil.rmtree(self.out_dir, ignore_errors=True)
        # The store's folder 0700, made here: the plugin's `makedirs` in the test process
        # would give it the umask's mode (0755) when a test run is the first to write it.
        private_dirs(self.out_dir.parent)

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
                str(p) for p in (*self.layout.packages.values(), *self.layout.modules.values())
            ),
        }

    def discard(self) -> None:
        shutil.rmtree(self.out_dir, ignore_errors=True)

    def finish(self, complete: bool) -> str:
        """Fold the run's output into the store (blocking); a note for the rung's result.
        An incomplete run (pytest crashed, was killed, or the plugin failed) adds nothing:
        the store keeps what it had, still checked against content before use."""
        try:
            outputs = sorted(self.out_dir.glob("deps-*.json"))
            if not complete or not outputs:
                return "test dependencies not recorded (the run did not complete)"
            merged = _merge(self.root, outputs)
            if merged.broken:
                return f"test dependencies not recorded: the recorder failed ({merged.broken[0]})"
            run, blocks = self._run(merged)
            whole = self._whole_files(run)
            kept = merge_run(deps_store_dir(self.state_dir), run, blocks, whole)
            return (
                f"recorded test dependencies of {len(run.tests)} tests ({run.backend}) for "
                f"selection; {kept} tests on record"
            )
        finally:
            self.discard()

    def _whole_files(self, run: TestRun) -> dict[str, str]:
        """Test file → sha256, for the test files this run ran whole at a steady content."""
        tests = {t.partition("::")[0] for t in run.tests}
        known = tests | {rel for rel in self.layout.side_files if self.layout.is_test(rel)}
        known |= set(self.layout.doctest_files) | self.layout.doctest_sources
        if self.scope.whole_suite:
            files = known
        else:
            files = set()
            for given in self.scope.paths:
                given = given.rstrip("/")
                if given.endswith(".py") or given in self.layout.doctest_files:
                    files.add(given)
                elif given in ("", "."):
                    files |= known
                else:
                    files |= {rel for rel in known if rel.startswith(given + "/")}
        out: dict[str, str] = {}
        for rel in sorted(files - self._dropped):
            digest = run.side.get(rel) or run.files.get(rel) or sha256_of(self.root / rel)
            if digest is not None and digest != UNKNOWN:
                out[rel] = digest
        return out

    def _own(self, rel: str, modules: set[str]) -> bool:
        """Whether `rel` is the project's own code (a package file or a single-file module),
        recorded block by block; the rest of what the run read is test-side."""
        if not rel.endswith(".py"):
            return False
        path = str(self.root / rel)
        return rel in modules or any(
            path.startswith(str(p) + os.sep) for p in self.layout.packages.values()
        )

    def _side(self, merged: _Merged, modules: set[str]) -> dict[str, str]:
        """Test-side file → sha256 now (`-`: it changed while the run read it)."""
        side: dict[str, str] = {}
        for rel, path in self.layout.side_files.items():
            if rel in modules:
                continue  # the project's own module, recorded block by block with the packages
            now = sha256_of(path)
            read = merged.hashes.get(rel)
            if now is None:
                continue
            side[rel] = now if rel not in merged.conflicts and read in (None, now) else UNKNOWN
        return side

    def _run(self, merged: _Merged) -> tuple[TestRun, dict[str, dict[str, Any]]]:
        files: dict[str, str] = {}
        blocks: dict[str, dict[str, Any]] = {}
        tables: dict[str, FileBlocks] = {}
        modules = self.layout.module_files
        for rel, seen in sorted(merged.hashes.items()):
            path = self.root / rel
            if not self._own(rel, modules):
                continue
            digest = sha256_of(path)
            if digest is None or rel in merged.conflicts or seen != digest:
                files[rel] = UNKNOWN  # changed while the suite ran: its data is not trusted
                continue
            table = file_blocks(read_regular(path))
            if table is None:
                files[rel] = UNKNOWN
                continue
            files[rel] = digest
            tables[rel] = table
            blocks[digest] = table.to_json()
        side = self._side(merged, modules)

        def blocks_of(keys: set[tuple[str, int]]) -> dict[str, set[str]]:
            out: dict[str, set[str]] = {}
            for rel, line in keys:
                table = tables.get(rel)
                block = table.block_at(line) if table is not None else None
                if block is not None:
                    out.setdefault(rel, set()).add(block)
            return out

        dropped = {
            t
            for t, entry in merged.tests.items()
            if self.passed_only and (entry.get("failed") or entry.get("skipped"))
        }
        # A file with a dropped test is not on record whole (its tests are not all known).
        self._dropped = {t.partition("::")[0] for t in dropped}
        tests = sorted(set(merged.tests) - dropped)
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
        imports = {rel: sorted(b) for rel, b in blocks_of(merged.imports).items()}
        run = TestRun(
            id=f"r{datetime.now(UTC).strftime('%Y%m%d%H%M%S')}-{os.getpid()}-{id(self) % 9973}",
            head=self.snapshot.head,
            dirty=dict(self.snapshot.hashes),
            files=files,
            side=side,
            tests=tests,
            index=index,
            imports=imports,
            modules={
                rel: {f: sorted(b) for f, b in blocks_of(keys).items()}
                for rel, keys in merged.modules.items()
            },
            recorded_at=datetime.now(UTC).isoformat(timespec="seconds"),
            backend=merged.backend,
            ended_early=[
                i
                for i, nodeid in enumerate(tests)
                if merged.tests[nodeid].get("failed") or merged.tests[nodeid].get("skipped")
            ],
            skipped=[
                i
                for i, nodeid in enumerate(tests)
                if merged.tests[nodeid].get("skipped") and not merged.tests[nodeid].get("failed")
            ],
            near_head=self._near_head(tables, imports, modules),
            spawned=[
                i
                for i, nodeid in enumerate(tests)
                if merged.tests[nodeid].get("spawned")
                or merged.spawning & set(merged.tests[nodeid].get("fixtures", []))
            ],
        )
        return run, blocks

    def _near_head(
        self, tables: dict[str, FileBlocks], imports: dict[str, list[str]], modules: set[str]
    ) -> bool:
        """Whether the run saw HEAD's import-time code (deps_store.TestRun.near_head): every
        file that differed from HEAD is a test file, or the project's own Python whose
        skeleton is HEAD's and whose blocks that differ did not run at import time."""
        head = self.snapshot.head
        if head is None:
            return False
        for rel in self.snapshot.hashes:
            if self.layout.is_test(rel):
                continue
            if not self._own(rel, modules):
                return False  # a conftest, a helper, a data file: judged whole, not here
            new = tables.get(rel) or _blocks_now(self.root / rel)
            try:
                old = _head_blocks(self.root, head, rel)
            except _NotShown:
                old = None
            if new is None or old is None:
                return False
            changed = changed_blocks(old.to_json(), new)
            if changed is None or changed & set(imports.get(rel, ())):
                return False
        return True


class _NotShown(Exception):
    """git could not show the file at that commit: never remembered."""


@functools.lru_cache(maxsize=64)
def _head_blocks(root: Path, head: str, rel: str) -> FileBlocks | None:
    """`rel`'s blocks in commit `head` (None: they do not parse), once per commit and file:
    a commit's content never changes, and every recorded run of an edit showed and compiled
    HEAD's file again (parse's 1,000-line module: a git process and a compile per run)."""
    shown = git_show(root, head, rel)
    if shown is None:
        raise _NotShown(rel)
    return file_blocks(shown)


def _blocks_now(path: Path) -> FileBlocks | None:
    try:
        return file_blocks(read_regular(path))
    except OSError:
        return None
