"""Narrowing test selection with recorded per-test dependency data (deps_store.py).

Each test's record describes one run: the content of every file that run loaded. A test
whose recorded run executed no block that differs now — from that run's content, and,
in the files the change touches, from HEAD's — runs the same code as then and as at HEAD,
so the change cannot affect it; every other test is selected. Per run, for the package
files whose content differs now:

* a file whose data is missing or was read while it changed, whose skeleton differs
  (import-time code: module and class bodies, `def` lines, decorators, defaults), or one
  of whose changed blocks ran at import time → the import graph decides, for that run's
  tests (`run_fallback`), and the run cannot vouch for its tests that ran any of its code;
* otherwise it cannot vouch for its tests that executed a changed block, nor for those a
  test-side file reaches whose module body executed one (`run_side`);
* test-side files that differ from the run's content count as changed for its tests
  (conftest → its folder, helper → its importers, test file → itself);
* a test that failed or was skipped in the run: its record may say less than it runs
  (pathspec: run alone, a test failed on a class attribute another test sets, before the
  changed code; that record vouched for it and a later verify said green over a real
  failure), so it cannot vouch. Except a test that was only skipped, when the tree compiles
  to the very code that run saw (the same HEAD; every file that differs from what it saw is
  Python whose blocks and skeleton are the same: a comment, blank lines): it skips the same
  way again, and running it would check nothing (toolz: a test skipped on this Python made
  every comment-only edit run pytest). It vouches wherever it skipped before running any
  of the project's code (a `skipif` mark, evaluated before its fixtures): what could make it
  run further is its mark's condition, import-time or test-side code, all judged as
  changes here like any test's (toolz's skipped test ran again after every edit).
* a test that started a process (or used a fixture that did: `subprocess`, `os.system`,
  a fork): what the child ran is not in its record (python-slugify runs its CLI with
  `python -m slugify`), so it cannot vouch wherever the project's own code differs from
  what its run saw, or is the change's (`_own_moved`). testmon records no child either,
  and would miss there.

A test keeps records from a few runs (deps_store.py); it is selected when none of them can
vouch for it (`doubts`), so after a revert the record from before the edit serves again.

Globally: a touched package file no run loaded → the import graph for every test
(`fallback`); a test file whose content no run ran whole → that file whole; a test the
data has no record of → selected; non-Python files changed since a run (not touched, e.g.
a branch switch) → that run vouches for none of its tests (`run_data`), another run that saw
them as they are still can; package modules gone since → `extra`, judged as changes.
"""

from __future__ import annotations

import functools
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ...git_env import git_env
from ...regular import read_regular
from ..blocks import FileBlocks, changed_blocks, file_blocks
from ..deps_store import RecordedDeps, TestRun
from ..layout import Layout
from .testdeps import UNKNOWN, sha256_of

__all__ = ["Narrowing", "existing", "narrow", "plain_node_id", "still_failing"]


@dataclass
class Narrowing:
    extra: list[str] = field(default_factory=list)
    """Package modules gone since a recording, not by the change: judged as changes."""
    run_data: dict[str, list[str]] = field(default_factory=dict)
    """Run id → non-Python files changed since that run that the change does not touch (a
    commit, a branch switch): what the run saw of them is not what the tests read now, so it
    vouches for none of its tests; a run that saw them as they are still can."""
    fallback: dict[str, str] = field(default_factory=dict)
    """Package file (or single-file module) → why the import graph decides for it, for
    every test."""
    tests: dict[str, str] = field(default_factory=dict)
    """Test selected whatever its records say (it has none) → why."""
    doubts: dict[str, dict[str, str]] = field(default_factory=dict)
    """Run id → test whose record in that run cannot vouch for it now → why. A test is
    selected when none of its records can."""
    files: dict[str, str] = field(default_factory=dict)
    """Test file selected whole → why."""
    run_fallback: dict[str, dict[str, str]] = field(default_factory=dict)
    """Run id → package file → why the import graph decides for that run's tests."""
    run_side: dict[str, dict[str, str]] = field(default_factory=dict)
    """Run id → test-side file changed for that run's tests → why."""
    unusable: list[str] = field(default_factory=list)
    """Why some recorded data cannot be used at all (the whole suite runs)."""


def plain_node_id(nodeid: str) -> str:
    """The node id without its parameters (`test_f[1-2]` → `test_f`): every parametrisation
    runs, and no id needs escaping on pytest's command line."""
    path, sep, rest = nodeid.partition("::")
    return path + sep + rest.split("[", 1)[0] if sep else nodeid


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", *args], env=git_env(), cwd=root, capture_output=True, check=False, timeout=60
    )


class _NotCached(Exception):
    """git could not show the file: said as "new since HEAD", never remembered."""


def _at_commit(root: Path, commit: str, rel: str) -> tuple[bytes, FileBlocks | None] | None:
    """`rel`'s bytes in `commit` and their blocks (None: they do not parse); None when git
    cannot show it (new since then, or no such commit)."""
    try:
        return (
            _blocks_at(root, commit, rel) if commit != "HEAD" else _show_blocks(root, commit, rel)
        )
    except _NotCached:
        return None


@functools.lru_cache(maxsize=64)
def _blocks_at(root: Path, commit: str, rel: str) -> tuple[bytes, FileBlocks | None]:
    """Per commit and file, once: a commit's content never changes, and every verify of a
    change to one file compared HEAD's side again (a git process and a compile)."""
    return _show_blocks(root, commit, rel)


def _show_blocks(root: Path, commit: str, rel: str) -> tuple[bytes, FileBlocks | None]:
    shown = _git(root, "show", f"{commit}:./{rel}")
    if shown.returncode != 0:
        raise _NotCached(rel)
    return shown.stdout, file_blocks(shown.stdout)


class _Tree:
    """The tree as it is now (content hashes, blocks) and HEAD's blocks, each read once.
    `git_root` is the repository that knows the commits (the tree itself, or the project
    whose HEAD an export of HEAD is)."""

    def __init__(
        self, root: Path, hashes: dict[str, str], head: str | None, git_root: Path | None = None
    ) -> None:
        self.root, self.hashes, self.head = root, hashes, head
        self.git_root = git_root or root
        self._sha: dict[str, str | None] = {}
        self._blocks: dict[str, FileBlocks | None] = {}
        self._head: dict[str, FileBlocks | str | None] = {}
        self._since: dict[str | None, set[str] | None] = {}

    def sha(self, rel: str) -> str | None:
        """sha256 now; None when the file is not there."""
        if rel not in self._sha:
            touched = self.hashes.get(rel)
            if touched is not None and touched not in ("-", "dir"):
                self._sha[rel] = touched
            else:
                self._sha[rel] = sha256_of(self.root / rel)
        return self._sha[rel]

    def blocks(self, rel: str) -> FileBlocks | None:
        if rel not in self._blocks:
            try:
                self._blocks[rel] = file_blocks(read_regular(self.root / rel, rel))
            except OSError:
                self._blocks[rel] = None
        return self._blocks[rel]

    def head_blocks(self, rel: str) -> FileBlocks | str | None:
        """HEAD's blocks of `rel`; a string: why they cannot be compared; None: the same
        content as now."""
        if rel not in self._head:
            shown = _at_commit(self.git_root, self.head or "HEAD", rel)
            if shown is None:
                self._head[rel] = f"{rel} is new since HEAD"
            else:
                try:
                    current = read_regular(self.root / rel, rel)
                except OSError:
                    current = b""
                content, old = shown
                if content == current:
                    self._head[rel] = None
                elif old is None:
                    self._head[rel] = f"{rel} does not parse at HEAD"
                else:
                    self._head[rel] = old
        return self._head[rel]

    def since(self, recorded: str | None) -> set[str] | None:
        """Paths git reports changed between a recorded HEAD and the current one; None when
        git cannot say (the recorded commit is gone)."""
        if recorded not in self._since:
            if recorded == self.head:
                self._since[recorded] = set()
            elif recorded is None or self.head is None:
                self._since[recorded] = None
            else:
                diff = _git(
                    self.git_root, "diff", "--name-only", "--relative", "-z", recorded, self.head
                )
                self._since[recorded] = (
                    None
                    if diff.returncode != 0
                    else {
                        p for p in diff.stdout.decode("utf-8", "surrogateescape").split("\0") if p
                    }
                )
        return self._since[recorded]


def _file_change(
    tree: _Tree, deps: RecordedDeps, run: TestRun, rel: str, touched: bool
) -> tuple[set[str], str | None]:
    """(changed blocks, None) or (…, why the import graph must decide)."""
    recorded = run.files[rel]
    if recorded == UNKNOWN:
        return set(), f"{rel} changed while the recording read it"
    new = tree.blocks(rel)
    if new is None:
        return set(), f"{rel} does not parse"
    out: set[str] = set()
    if tree.sha(rel) != recorded:
        old = deps.blocks.get(recorded)
        if old is None:
            return set(), f"no dependency data for {rel}"
        since = changed_blocks(old, new)
        if since is None:
            # Against the run's copy, which may hold an earlier edit: not "your edit changed".
            where = "(module or class body, def line)"
            return set(), f"{rel}: import-time code differs from the recorded run's {where}"
        out |= since
    if touched:
        # The change is against HEAD: a block the run saw as it is now may still differ
        # from HEAD's (an earlier edit, recorded already): its tests are the change's too.
        head = tree.head_blocks(rel)
        if isinstance(head, str):
            return set(), head
        if head is not None:
            vs_head = changed_blocks(head.to_json(), new)
            if vs_head is None:
                return set(), f"{rel}: import-time code changed since HEAD"
            out |= vs_head
    ran_at_import = out & set(run.imports.get(rel, ()))
    if ran_at_import:
        return out, f"{rel}:{sorted(ran_at_import)[0]} runs at import time"
    return out, None


def _moved_since(
    layout: Layout, tree: _Tree, run: TestRun, since: set[str], touched: set[str]
) -> list[str]:
    """What changed since the run that content comparison cannot judge: other files than
    Python ones, and package modules gone since (not by the change)."""
    out: list[str] = []
    for rel in sorted((since | set(run.dirty)) - touched):
        now = tree.sha(rel)
        if rel.endswith((".py", ".pyi")):
            if now is None and layout.module_of(rel) is not None:
                out.append(rel)
            continue  # otherwise compared by content
        recorded = run.dirty.get(rel)
        if recorded is not None and (now == recorded or (now is None and recorded == "-")):
            continue  # the same content as when the run recorded it
        out.append(rel)
    return out


def _select_ran(
    run: TestRun, owned: set[int], rel: str, blocks: set[str] | None, why: str, out: Narrowing
) -> None:
    """The run's tests that ran `blocks` of `rel` (every block of it when None)."""
    per_block = run.index.get(rel, {})
    for block in sorted(per_block if blocks is None else blocks):
        for i in per_block.get(block, ()):
            if i in owned:
                out.doubts.setdefault(run.id, {}).setdefault(
                    run.tests[i], f"ran {rel}:{block}{why}"
                )


def _narrow_run(
    layout: Layout, tree: _Tree, deps: RecordedDeps, run: TestRun, touched: set[str], out: Narrowing
) -> None:
    owned = set(deps.owned(run))
    since = tree.since(run.head)
    if since is None:
        out.unusable.append(f"data recorded at {str(run.head)[:12]}, which git does not know")
        return
    moved = _moved_since(layout, tree, run, since, touched)
    out.extra += [rel for rel in moved if rel.endswith((".py", ".pyi"))]
    out.run_data[run.id] = [rel for rel in moved if not rel.endswith((".py", ".pyi"))]
    code_moved = bool(since or moved)
    # whether the tree may run other code than the run saw
    fallback = out.run_fallback.setdefault(run.id, {})
    side = out.run_side.setdefault(run.id, {})
    for rel in sorted(run.files):
        now = tree.sha(rel)
        if now == run.files[rel] and rel not in touched:
            continue
        if now is None:
            code_moved = True
            if rel not in touched:
                out.extra.append(rel)  # gone since the run, not by the change: judged as deleted
            continue
        blocks, why = _file_change(tree, deps, run, rel, rel in touched)
        code_moved = code_moved or bool(blocks) or why is not None
        if why is not None:
            fallback[rel] = why
            _select_ran(run, owned, rel, None, f" ({why})", out)
            continue
        _select_ran(run, owned, rel, blocks, "", out)
        for module, ran in run.modules.items():
            for block in sorted(blocks & set(ran.get(rel, ()))):
                side.setdefault(module, f"{module} runs {rel}:{block} at import time")
    for rel, why in _side_changes(layout, tree, run, touched, since).items():
        side.setdefault(rel, why)
        code_moved = True
    others = (touched | set(run.dirty)) - set(run.files)
    code_moved = code_moved or not all(_compiles_as_seen(tree, run, rel, touched) for rel in others)
    if run.spawned and _own_moved(layout, tree, run, since, touched):
        why = "it starts a process, whose code its record does not see"
        doubts = out.doubts.setdefault(run.id, {})
        for i in set(run.spawned) & set(owned):
            doubts.setdefault(run.tests[i], why)
    ran_code = {i for per_block in run.index.values() for ids in per_block.values() for i in ids}
    for i in run.ended_early:
        if i in owned and (i not in run.skipped or (code_moved and i in ran_code)):
            out.doubts.setdefault(run.id, {}).setdefault(
                run.tests[i], "failed or was skipped in the run on record (it may have run less)"
            )


def _own_moved(
    layout: Layout, tree: _Tree, run: TestRun, since: set[str], touched: set[str]
) -> bool:
    """Whether any of the project's own Python differs from what `run` saw, or is the
    change's: a process a test starts (python-slugify's `python -m slugify`) may run any of
    it, `__main__.py` too, which the test's own process never loads."""
    for rel in sorted(touched | since | set(run.dirty) | set(run.files)):
        if not rel.endswith(".py") or (
            layout.module_of(rel) is None and rel not in layout.module_files
        ):
            continue
        if rel in touched:
            return True
        seen = run.files.get(rel, run.dirty.get(rel))
        now = tree.sha(rel)
        if seen is None or (now != seen and not (now is None and seen == UNKNOWN)):
            return True
    return False


def _side_changes(
    layout: Layout, tree: _Tree, run: TestRun, touched: set[str], since: set[str]
) -> dict[str, str]:
    """The test-side files (and single-file modules) that differ from what `run` saw, each
    with why; not the change's own test-side files, judged for every test."""
    single = layout.module_files
    out: dict[str, str] = {}
    for rel in sorted((set(run.side) | set(layout.side_files) | single) - set(run.files)):
        if rel in touched and rel not in single:
            continue
        # A single-file module this run has no blocks of (recorded before modules were):
        # changed for its tests whenever it differs, as a helper would be.
        now = tree.sha(rel)
        if now is None and layout.is_test(rel) and rel not in single:
            continue  # a test file deleted since: it went with its own tests, no one else's
        if rel in single and rel not in run.side and rel not in touched:
            # No hash of it on record (a module the run never loaded, such as xmltodict's
            # ez_setup.py): what it was then is the run's dirty content, else its HEAD's.
            then = run.dirty.get(rel)
            if then is None and rel not in since:
                continue
            if then is not None and (now == then or (now is None and then == "-")):
                continue
        if rel in touched or now != run.side.get(rel):
            out[rel] = f"{rel} {'deleted' if now is None else 'changed'} since the recording"
    return out


def _compiles_as_seen(tree: _Tree, run: TestRun, rel: str, touched: set[str]) -> bool:
    """Whether `rel` (not a file the run loaded) is now the code the run saw: the content it
    had then (dirty then), else HEAD's, the same or, for Python, with the same blocks."""
    now, then = tree.sha(rel), run.dirty.get(rel)
    if then is not None:
        return now == then or (now is None and then == "-")
    if rel not in touched:
        return True  # clean then and now at the same HEAD
    if now is None or not rel.endswith((".py", ".pyi")):
        return False
    head, new = tree.head_blocks(rel), tree.blocks(rel)
    if head is None:
        return True
    if isinstance(head, str) or new is None:
        return False
    return changed_blocks(head.to_json(), new) == set()


def narrow(
    layout: Layout,
    deps: RecordedDeps,
    touched: list[str],
    head: str | None,
    hashes: dict[str, str] | None = None,
    git_root: Path | None = None,
) -> Narrowing:
    """What the data says about the tree as it is now, against HEAD (`head`: the current
    HEAD commit, None without one; `hashes`: the snapshot's content hashes of `touched`;
    `git_root`: the repository, when `layout` is an export of HEAD outside it)."""
    tree = _Tree(layout.root, hashes or {}, head, git_root)
    touched_set = set(touched)
    out = Narrowing()
    live = {rid: run for rid, run in deps.runs.items() if deps.owned(run)}
    for run in live.values():
        _narrow_run(layout, tree, deps, run, touched_set, out)
    loaded = {rel for run in live.values() for rel in run.files}
    modules = layout.module_files
    for rel in sorted(touched_set - loaded):
        own = layout.module_of(rel) is not None or rel in modules
        if own and (layout.root / rel).exists():
            out.fallback[rel] = f"no dependency data for {rel}"
    for rel in sorted({*layout.side_files, *layout.doctest_files, *layout.doctest_sources}):
        if not layout.runs_as_test(rel):
            continue
        held = deps.complete.get(rel, {}).get(tree.sha(rel) or "")
        if held is None:
            out.files[rel] = f"{rel}: no dependency data for it as it is"
            continue
        for test in held:
            if test not in deps.records:
                out.tests.setdefault(test, "no dependency data for it")
    out.extra = sorted(set(out.extra) - touched_set)
    return out


def existing(deps: RecordedDeps, layout: Layout, test: str) -> str | None:
    """The id to pass pytest for a recorded test: itself (without parameters) when its file
    as it is now holds it, its file when that is unknown, None when the test is gone."""
    rel = test.partition("::")[0]
    now = sha256_of(layout.root / rel)
    if now is None:
        return None
    held = deps.complete.get(rel, {}).get(now)
    if held is None:
        runs = [deps.runs[r] for r in deps.records.get(test, ()) if r in deps.runs]
        if any(now in (run.files.get(rel), run.side.get(rel)) for run in runs):
            return plain_node_id(test)
        return rel
    return plain_node_id(test) if test in held else None


def still_failing(deps: RecordedDeps, head: str, hashes: dict[str, str]) -> dict[str, str]:
    """Tests that failed in a run of the code the tree has now (at this HEAD, its other
    files as they are now): a comment does not vouch for a red test (deps_store.py)."""
    out: dict[str, str] = {}
    for run in deps.runs.values():
        if run.head != head or any(hashes.get(rel) != sha for rel, sha in run.dirty.items()):
            continue
        failed = set(run.ended_early) - set(run.skipped)
        for i in deps.owned(run):
            if i in failed:
                out.setdefault(run.tests[i], "failed in a run of the same code")
    return out
