"""Narrowing test selection with recorded per-test dependency data (testdeps.py).

The data describes the project as it was when `test.full` recorded it. A test whose
recorded run executed no block that has changed since then runs the same code again, so
it cannot be affected; every other test is selected. Concretely, for the files changed
since the recording (content differs from the recorded hash, or git says so between the
recorded and current HEAD) plus the files the change touches:

* a package file whose data is missing or stale, whose skeleton changed (import-time code:
  module and class bodies, `def` lines, decorators, defaults), or one of whose changed
  blocks ran at import time → the import graph decides for that module (`fallback`);
* otherwise the tests that executed a changed block, and every test-side file whose module
  body executed one (treated as if that file changed: its importers, its folder for a
  conftest);
* test-side files changed since the recording count as changed files (safety rules of
  selection.py apply: conftest → folder, non-Python → whole suite).
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..regular import read_regular
from .blocks import changed_blocks, file_blocks
from .layout import Layout
from .testdeps import RecordedDeps, sha256_of

__all__ = ["Narrowing", "narrow", "plain_node_id"]


@dataclass
class Narrowing:
    extra: list[str] = field(default_factory=list)
    """Paths changed since the recording that the change itself does not touch."""
    fallback: dict[str, str] = field(default_factory=dict)
    """Package file → why the import graph decides for it."""
    tests: dict[str, str] = field(default_factory=dict)
    """Selected test (node id without parameters) → why."""
    side: dict[str, str] = field(default_factory=dict)
    """Test-side file whose import-time code ran a changed block → why."""


def plain_node_id(nodeid: str) -> str:
    """The node id without its parameters (`test_f[1-2]` → `test_f`): every parametrisation
    runs, and no id needs escaping on pytest's command line."""
    path, sep, rest = nodeid.partition("::")
    return path + sep + rest.split("[", 1)[0] if sep else nodeid


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, check=False, timeout=60)


def _since_recording(root: Path, deps: RecordedDeps, head: str | None) -> set[str] | None:
    """Paths git reports changed between the recorded HEAD and the current one (`head`, the
    snapshot's: no git process to ask again); None when git cannot say (the recorded commit
    is gone): the data is then unusable."""
    current = head
    if current == deps.head:
        return set()
    if deps.head is None or current is None:
        return None
    diff = _git(root, "diff", "--name-only", "--relative", "-z", deps.head, current)
    if diff.returncode != 0:
        return None
    return {p for p in diff.stdout.decode("utf-8", "surrogateescape").split("\0") if p}


def _head_blocks_changed(root: Path, rel: str, current: bytes) -> set[str] | str | None:
    """Blocks changed between HEAD's version and `current`; None: skeleton changed; a string:
    why HEAD's version cannot be compared."""
    shown = _git(root, "show", f"HEAD:./{rel}")
    if shown.returncode != 0:
        return f"{rel} is new since HEAD"
    if shown.stdout == current:
        return set()
    old, new = file_blocks(shown.stdout), file_blocks(current)
    if old is None or new is None:
        return f"{rel} does not parse"
    return changed_blocks(old.to_json(), new)


def _file_change(
    root: Path, rel: str, deps: RecordedDeps, touched: set[str]
) -> tuple[set[str], str | None]:
    """(changed blocks, None) or (…, why the import graph must decide)."""
    recorded = deps.files.get(rel)
    if recorded is None:
        return set(), f"no dependency data for {rel}"
    try:
        current = read_regular(root / rel, rel)
    except OSError:
        return set(), f"{rel} cannot be read"
    blocks: set[str] = set()
    if hashlib.sha256(current).hexdigest() != recorded["sha"]:
        new = file_blocks(current)
        if new is None:
            return set(), f"{rel} does not parse"
        since = changed_blocks(recorded, new)
        if since is None:
            return set(), f"{rel}: import-time code changed (module or class body, def line)"
        blocks |= since
    if rel in touched and rel in deps.dirty:
        # Recorded with uncommitted edits: compare with HEAD too, so nothing the change
        # did before the recording is lost.
        vs_head = _head_blocks_changed(root, rel, current)
        if isinstance(vs_head, str):
            return set(), vs_head
        if vs_head is None:
            return set(), f"{rel}: import-time code changed since HEAD"
        blocks |= vs_head
    ran_at_import = blocks & set(deps.imports.get(rel, ()))
    if ran_at_import:
        return blocks, f"{rel}:{sorted(ran_at_import)[0]} runs at import time"
    return blocks, None


def _changed_since(
    layout: Layout, deps: RecordedDeps, touched: set[str], head: str | None
) -> set[str] | None:
    root = layout.root
    moved = _since_recording(root, deps, head)
    if moved is None:
        return None
    out = set(moved) | set(deps.dirty)
    for rel, info in deps.files.items():
        if sha256_of(root / rel) != info["sha"]:
            out.add(rel)
    for rel, digest in deps.side.items():
        if sha256_of(root / rel) != digest:
            out.add(rel)
    for rel in list(out - touched):
        recorded = deps.files.get(rel, {}).get("sha") or deps.side.get(rel) or deps.dirty.get(rel)
        if recorded is not None and sha256_of(root / rel) == recorded:
            out.discard(rel)  # same content as when the data was recorded
    for rel in layout.side_files:
        if rel not in deps.side:
            out.add(rel)  # a test-side file the recording does not know
    return out


def narrow(
    layout: Layout, deps: RecordedDeps, touched: list[str], head: str | None
) -> Narrowing | None:
    """What the data says about the change (`head`: the current HEAD commit, None without
    one); None when it cannot be used at all."""
    touched_set = set(touched)
    since = _changed_since(layout, deps, touched_set, head)
    if since is None:
        return None
    out = Narrowing(extra=sorted(since - touched_set))
    rels = {rel for rel in since | touched_set if layout.module_of(rel) is not None}
    for rel in sorted(rels):
        blocks, fallback = _file_change(layout.root, rel, deps, touched_set)
        if fallback is not None:
            out.fallback[rel] = fallback
            continue
        per_block = deps.index.get(rel, {})
        for block in sorted(blocks):
            for i in per_block.get(block, ()):
                out.tests.setdefault(plain_node_id(deps.tests[i]), f"ran {rel}:{block}")
            for side, ran in deps.modules.items():
                if block in ran.get(rel, ()):
                    out.side.setdefault(side, f"{side} runs {rel}:{block} at import time")
    return out
