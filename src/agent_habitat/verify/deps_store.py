"""The store of per-test dependency data (`testdeps/deps.json` in the workspace state
folder): its model, and how a new run's record is merged into it.

Records are merged per test: a test keeps the records of its last `RECORDS_PER_TEST`
runs (`records`, newest first), each from a run at other content, so that after a revert
or a branch switch one of them may still hold (selection needs just one that does); the
newest run of HEAD's content and the newest run near it (`near_head`) are kept besides. A run
no test keeps a record of is dropped, and past `MAX_RUNS` the oldest is (a test left with
no record is one selection runs). `complete` says, per test file and content, which tests
the file holds, from a run that ran it whole: a test selection names by node id exists at
that content, and a test the data has no record of is selected rather than forgotten.

Two processes may merge at once (a host and a one-shot `habitat verify`): the merge holds
an `flock` on `deps.lock`; readers never wait (the file is replaced whole).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..workspace import private_dirs, write_private

__all__ = [
    "MAX_RUNS",
    "RECORDS_PER_TEST",
    "RecordedDeps",
    "RunScope",
    "TestRun",
    "deps_store_dir",
    "is_clean_at",
    "load_testdeps",
    "merge_run",
    "parse_testdeps",
]

VERSION = 3  # 3: runs merged per test, keyed by content (2: one full run)
STORE = "deps.json"
MAX_RUNS = 48
RECORDS_PER_TEST = 3
_CONTENTS_PER_FILE = 4
"""Contents of one test file `complete` remembers (a revert or a branch switch reuses them)."""


def deps_store_dir(state_dir: Path) -> Path:
    """Where a workspace's test dependency store lives (its `deps.json`)."""
    return state_dir / "testdeps"


@dataclass
class RunScope:
    """What a run covered: the whole suite, or these paths whole (files, folders); the
    node ids and `-k` filters of a subset run are not whole files."""

    whole_suite: bool = True
    paths: list[str] = field(default_factory=list)


@dataclass
class TestRun:
    """One pytest run's record, as the state of the files it saw."""

    id: str
    head: str | None
    dirty: dict[str, str]
    """The snapshot's touched files (path → sha256, `-` deleted) when it ran."""
    files: dict[str, str]
    """Package file the run loaded → sha256 then (`-`: it changed while the run read it)."""
    side: dict[str, str]
    """Test-side file → sha256 then (`-`: it changed while the run read it)."""
    tests: list[str]
    index: dict[str, dict[str, list[int]]]
    """Package file → block → indices into `tests` that ran it (fixtures included)."""
    imports: dict[str, list[str]]
    """Package file → blocks that ran at import time (their change selects every importer)."""
    modules: dict[str, dict[str, list[str]]]
    """Test-side file → package file → blocks its module body ran."""
    recorded_at: str = ""
    backend: str = ""
    ended_early: list[int] = field(default_factory=list)
    """Indices into `tests` of the tests that failed or were skipped in this run: a test may
    stop before code it runs when it passes (or fail on another test's missing side effect,
    run alone), so this record cannot vouch for them."""
    skipped: list[int] = field(default_factory=list)
    """Those of `ended_early` that were skipped and never failed: where the tree compiles to
    the code this run saw, they skip the same way again (select/deps.py)."""
    spawned: list[int] = field(default_factory=list)
    """Indices into `tests` of the tests that started a process (or used a fixture that
    did): what the child ran is not in the record, so it cannot vouch for them where the
    project's own code differs (select/deps.py)."""
    near_head: bool = False
    """The run saw HEAD's import-time code: what differed from HEAD were test files and
    function bodies that did not run at import (select/testdeps.py). Its records can
    vouch for every later edit of other code; a run of an edit to import-time code (a
    constant, a `def` line) vouches for nothing once that edit is gone."""

    @staticmethod
    def from_json(rid: str, data: dict[str, Any]) -> TestRun:
        return TestRun(
            id=rid,
            head=data["head"],
            dirty=data["dirty"],
            files=data["files"],
            side=data["side"],
            tests=data["tests"],
            index=data["index"],
            imports=data["imports"],
            modules=data["modules"],
            recorded_at=data.get("recorded_at", ""),
            backend=data.get("backend", ""),
            ended_early=data.get("ended_early", []),
            skipped=data.get("skipped", []),
            near_head=data.get("near_head", False),
            spawned=data.get("spawned", []),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "head": self.head,
            "dirty": self.dirty,
            "files": self.files,
            "side": self.side,
            "tests": self.tests,
            "index": self.index,
            "imports": self.imports,
            "modules": self.modules,
            "recorded_at": self.recorded_at,
            "backend": self.backend,
            "ended_early": self.ended_early,
            "skipped": self.skipped,
            "near_head": self.near_head,
            "spawned": self.spawned,
        }


@dataclass
class RecordedDeps:
    """The store as selection reads it."""

    runs: dict[str, TestRun] = field(default_factory=dict)
    records: dict[str, list[str]] = field(default_factory=dict)
    """Test node id → the runs that hold a record of it, newest first."""
    complete: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    """Test file → sha256 → every test it holds at that content (from a run of it whole)."""
    blocks: dict[str, dict[str, Any]] = field(default_factory=dict)
    """sha256 of a package file → its blocks (`FileBlocks.to_json()`)."""

    @property
    def tests(self) -> int:
        return len(self.records)

    @property
    def recorded_at(self) -> str:
        return max((r.recorded_at for r in self.runs.values()), default="")

    @property
    def summary(self) -> str:
        """`38 tests, recorded <the newest run's time>`: the warm-up's words and `habitat
        status`'s, read from the store as it is."""
        return f"{self.tests} tests, recorded {self.recorded_at}"

    def owned(self, run: TestRun) -> list[int]:
        """Indices of the run's tests it still holds a record of."""
        return [i for i, t in enumerate(run.tests) if run.id in self.records.get(t, ())]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "runs": {rid: run.to_json() for rid, run in self.runs.items()},
            "records": self.records,
            "complete": self.complete,
            "blocks": self.blocks,
        }


def parse_testdeps(data: object) -> RecordedDeps | None:
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None  # another layout (an older habitat's): selection falls back, then re-records
    return RecordedDeps(
        runs={rid: TestRun.from_json(rid, run) for rid, run in data["runs"].items()},
        records=data["records"],
        complete=data["complete"],
        blocks=data["blocks"],
    )


def load_testdeps(directory: Path) -> RecordedDeps | None:
    try:
        data = json.loads((directory / STORE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    try:
        return parse_testdeps(data)
    except (KeyError, TypeError, AttributeError):
        return None


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    private_dirs(directory)
    fd = os.open(directory / "deps.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def merge_run(
    directory: Path, run: TestRun, blocks: dict[str, dict[str, Any]], whole: dict[str, str]
) -> int:
    """Add `run` to the store in `directory`; `whole`: test file → sha256 for the files it
    ran whole. Blocking. Returns how many tests have a record afterwards."""
    with _locked(directory):
        deps = load_testdeps(directory) or RecordedDeps()
        deps.runs[run.id] = run
        deps.blocks.update(blocks)
        for test in run.tests:
            older = [r for r in deps.records.get(test, []) if r != run.id]
            deps.records[test] = _kept([run.id, *older], deps.runs)
        by_file: dict[str, list[str]] = {}
        for test in run.tests:
            by_file.setdefault(test.partition("::")[0], []).append(test)
        for rel, digest in whole.items():
            held = sorted(by_file.get(rel, []))
            ran = set(held)
            for test in [t for t in deps.records if t.partition("::")[0] == rel and t not in ran]:
                del deps.records[test]  # not in the file as it is: gone, or renamed
            contents = deps.complete.setdefault(rel, {})
            contents.pop(digest, None)
            contents[digest] = held  # newest last
            while len(contents) > _CONTENTS_PER_FILE:
                contents.pop(next(iter(contents)))
        _collect(deps)
        write_private(directory / STORE, json.dumps(deps.to_json()))
        return deps.tests


def _kept(ids: list[str], runs: dict[str, TestRun]) -> list[str]:
    """The newest `RECORDS_PER_TEST` of a test's records, and besides them the newest clean
    one (a run of HEAD's content, `dirty` empty: the background recording's export) and
    the newest near HEAD (`near_head`): what a revert, or any edit of other code, compares
    with, as testmon compares with its recording run. Without the second, three edits of
    import-time code in a row (python-slugify's constants, toolz's) left a test only
    records that vouch for nothing, and the import graph decided for the next edit."""
    kept = ids[:RECORDS_PER_TEST]
    for anchor in (
        next((r for r in ids if r in runs and not runs[r].dirty), None),
        next((r for r in ids if r in runs and runs[r].near_head), None),
    ):
        if anchor is not None and anchor not in kept:
            kept.append(anchor)
    return kept


def is_clean_at(run: TestRun, head: str | None) -> bool:
    """The run saw HEAD's content (`head`) and nothing else."""
    return head is not None and run.head == head and not run.dirty


def _collect(deps: RecordedDeps) -> None:
    """Drop runs that hold no test, the oldest past MAX_RUNS, and blocks nobody reads."""
    live = {rid for rids in deps.records.values() for rid in rids}
    for rid in [r for r in deps.runs if r not in live]:
        del deps.runs[rid]
    while len(deps.runs) > MAX_RUNS:
        del deps.runs[min(deps.runs, key=lambda r: deps.runs[r].recorded_at)]
    kept = {t: [r for r in rids if r in deps.runs] for t, rids in deps.records.items()}
    deps.records = {t: rids for t, rids in kept.items() if rids}
    used = {sha for run in deps.runs.values() for sha in run.files.values()}
    deps.blocks = {sha: b for sha, b in deps.blocks.items() if sha in used}
