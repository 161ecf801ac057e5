"""Which modules and tests a change affects.

The project's packages go through grimp's import graph (cached in the workspace state
folder); tests, conftests and test helpers outside the packages are read with `ast`.
A test is affected when it imports, directly or through other test-side modules, a
changed module or one that imports a changed module. A changed conftest widens to its
folder (an unchanged conftest that imports an affected module widens the same way);
a non-Python change, a deleted module, or a file the graph cannot see widens to the
whole suite, and the reasons say which.

Where test runs have recorded per-test dependency data (testdeps.py: every test rung and
the background recording record it), the tests a changed package file affects come from
that data instead, down to the test function, wherever it is valid (deps_selection.py);
for any file where it is missing or stale, or where the change touches import-time code,
the import graph decides as before. The data only ever removes tests whose recorded run
executed none of the changed code.
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import grimp
from grimp.application.config import settings as grimp_settings
from grimp.application.ports.packagefinder import AbstractPackageFinder

from ..config import LadderConfig
from ..deps_store import RecordedDeps
from ..layout import Layout, is_manifest
from ..models import Selection
from .deps import Narrowing, existing, narrow, still_failing
from .doubts import doubt_moved_data, doubted
from .memo import SelectionMemo
from .named_imports import add_named_imports
from .same_code import same_code_as_head
from .side_graph import SideImports, side_graph
from .testdeps import deps_store_dir, load_testdeps, sha256_of

__all__ = ["Impact", "analyse_impact", "explicit_selection", "unrecorded", "warm_graph"]

# grimp's package finder is process-global configuration; swapping it is guarded.
_GRIMP_LOCK = threading.Lock()
_MAX_REASONS = 20


@dataclass
class Impact:
    changed_modules: list[str] = field(default_factory=list)
    affected_modules: list[str] = field(default_factory=list)
    """Changed modules plus every package module that imports one, directly or not."""
    affected_files: list[str] = field(default_factory=list)
    """Relative paths of the affected package modules."""
    selection: Selection = field(default_factory=lambda: Selection(full=False))
    graph_error: str | None = None
    provenance: str = ""
    """Which part of the selection came from recorded data and which from the import graph."""


class _DirectoryFinder(AbstractPackageFinder):
    """Finds packages by the directories we already know, not by `sys.path`: the project's
    packages are not importable in the habitat's own interpreter (or are another copy)."""

    def __init__(self, directories: dict[str, Path]) -> None:
        self._dirs = directories

    def determine_package_directories(self, package_name: str, file_system: object) -> set[str]:
        return {str(self._dirs[package_name])}


class _Graph:
    """The packages' import graph, built (from grimp's cache) on first use."""

    def __init__(self, layout: Layout, cache_dir: Path, memo: SelectionMemo | None) -> None:
        self._layout, self._cache_dir, self._memo = layout, cache_dir, memo
        self._graph: grimp.ImportGraph | None = None
        self._modules: set[str] = set()

    def _build(self) -> grimp.ImportGraph:
        with _GRIMP_LOCK:
            previous = grimp_settings.PACKAGE_FINDER
            grimp_settings.configure(PACKAGE_FINDER=_DirectoryFinder(self._layout.packages))
            try:
                graph = grimp.build_graph(
                    *sorted(self._layout.packages), cache_dir=str(self._cache_dir)
                )
            finally:
                grimp_settings.configure(PACKAGE_FINDER=previous)
        add_named_imports(graph, self._layout.packages)  # plugins loaded by dotted name
        return graph

    def modules(self) -> set[str]:
        if self._graph is None:
            if self._memo is None:
                self._graph = self._build()
            else:
                self._graph = self._memo.graph(self._layout.packages, self._cache_dir, self._build)
            self._modules = set(self._graph.modules)
        return self._modules

    def downstream(self, changed: set[str]) -> set[str]:
        if not self._layout.packages or not changed:
            return set(changed)
        known = self.modules()
        assert self._graph is not None
        out = set(changed)
        for module in changed:
            if module in known:
                out |= set(self._graph.find_downstream_modules(module))
        return out


def _prefixes(name: str) -> Iterable[str]:
    parts = name.split(".")
    return (".".join(parts[:i]) for i in range(len(parts), 0, -1))


def _folder_of(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else "."


class _Collector:
    def __init__(self) -> None:
        self.full_reasons: list[str] = []
        self.tests: dict[str, str] = {}
        self.folders: dict[str, str] = {}

    def widen_full(self, reason: str) -> None:
        if len(self.full_reasons) < _MAX_REASONS:
            self.full_reasons.append(reason)

    def selection(self) -> Selection:
        if self.full_reasons or "." in self.folders:
            reasons = self.full_reasons or [self.folders["."]]
            return Selection(full=True, reasons=reasons)
        picked: dict[str, str] = dict(self.folders)
        for test, why in self.tests.items():
            if not any(test.startswith(folder + "/") for folder in self.folders):
                picked[test] = why
        for test in [t for t in picked if "::" in t]:
            if test.partition("::")[0] in picked:
                del picked[test]  # its whole file runs anyway
        return Selection(
            full=False, tests=sorted(picked), reasons=[picked[t] for t in sorted(picked)]
        )


def _classify(
    layout: Layout, touched: list[str], deleted: set[str], config: LadderConfig, out: _Collector
) -> tuple[set[str], set[str]]:
    """Sort the change into changed package modules and changed test-side files."""
    modules: set[str] = set()
    side: set[str] = set()
    single = layout.module_files
    for rel in touched:
        name = rel.rsplit("/", 1)[-1]
        if is_manifest(rel):
            out.widen_full(f"dependency manifest {rel} changed")
        elif rel in layout.doctest_files:
            side.add(rel)  # a doctest text file: a test of its own
        elif not rel.endswith((".py", ".pyi")):
            if not any(fnmatch.fnmatch(rel, pat) for pat in config.selection_ignore):
                out.widen_full(f"non-Python file {rel} changed")
        elif name == "conftest.py":
            out.folders[_folder_of(rel)] = f"{rel} changed (widens to its folder)"
        elif (module := layout.module_of(rel)) is not None:
            if rel in deleted:
                out.widen_full(f"module {module} was deleted; its importers are not in the graph")
            else:
                modules.add(module)
        elif rel in single:
            side.add(rel)  # a single-file module: reached through what imports it by name
        elif rel in deleted and layout.is_test(rel):
            continue
        elif rel in layout.side_files or (rel in deleted and layout.in_test_roots(rel)):
            if rel in deleted:
                out.widen_full(f"test helper {rel} was deleted")
            side.add(rel)
        else:
            out.widen_full(f"{rel} is outside the packages and tests the import graph covers")
    return modules, side


def analyse_impact(
    layout: Layout,
    touched: list[str],
    deleted: Iterable[str],
    config: LadderConfig,
    cache_dir: Path,
    memo: SelectionMemo | None = None,
    *,
    head: str | None,
    hashes: dict[str, str] | None = None,
    select_tests: bool = True,
) -> Impact:
    """Blocking (reads files, builds the graph); call it from a worker thread.

    `cache_dir` holds grimp's cache; the recorded test dependencies live beside it. `memo`
    (a long-lived process's) keeps the graph and the dependency data between calls. `head`
    is the snapshot's HEAD commit (None outside git or before the first commit), `hashes`
    its content hashes of the touched files (read from disk where missing). Without
    `select_tests` it stops at the affected modules (the selection is left empty)."""
    out = _Collector()
    if not layout.is_python:
        out.widen_full("not a Python project: the import graph cannot see the change")
        return Impact(selection=out.selection())
    deleted = set(deleted)
    if head is None and touched:
        # Without a HEAD every file is the change: "non-Python file PKG-INFO changed" (parse
        # 1.20.2 from its sdist, no git) named a change nobody made.
        out.widen_full(
            "no HEAD commit to compare with (not a git work tree, or no commit yet): "
            "every file counts as changed"
        )
    changed, changed_side = _classify(layout, touched, deleted, config, out)
    impact = Impact(changed_modules=sorted(changed))
    graph = _Graph(layout, cache_dir, memo)
    try:
        affected = graph.downstream(changed)
    except (grimp.exceptions.SourceSyntaxError, ValueError, OSError) as exc:
        impact.graph_error = str(exc)
        out.widen_full(f"import graph unavailable ({exc})")
        affected = set(changed)
    impact.affected_modules = sorted(affected)
    files = (layout.file_of(m) for m in impact.affected_modules)
    impact.affected_files = sorted({layout.rel(f) for f in files if f is not None})
    if not select_tests:
        return impact
    if head is not None and not deleted and same_code_as_head(layout.root, touched, head):
        now = {rel: (hashes or {}).get(rel) or sha256_of(layout.root / rel) for rel in touched}
        hashes = {rel: sha for rel, sha in now.items() if sha}
        return _same_code(layout, impact, cache_dir, memo, head, hashes)
    store = deps_store_dir(cache_dir.parent)
    deps = None
    if touched:
        deps = memo.deps(store, load_testdeps) if memo is not None else load_testdeps(store)
    side = memo.side_imports(cache_dir) if memo is not None else SideImports(cache_dir)
    if deps is None or not deps.records or impact.graph_error is not None:
        for rel in impact.affected_files:
            if layout.runs_as_test(rel):
                out.tests[rel] = f"{rel} is affected in the import graph"
        _select_side(layout, side, affected, changed_side, out)
        impact.provenance = (
            "selection: by the import graph (no test dependency data recorded yet; "
            "each test run records it)"
            if deps is None or not deps.records
            else "selection: by the import graph"
        )
    else:
        narrowing = narrow(layout, deps, touched, head, hashes)
        impact.provenance = _select_with_deps(
            layout, side, graph, deps, narrowing, config, deleted, changed_side, out
        )
    impact.selection = out.selection()
    return impact


def _same_code(
    layout: Layout,
    impact: Impact,
    cache_dir: Path,
    memo: SelectionMemo | None,
    head: str,
    hashes: dict[str, str],
) -> Impact:
    """The change is only comments or blank lines (`same_code_as_head`): no test can run
    differently, except that a test which failed on this very code fails again."""
    store = deps_store_dir(cache_dir.parent)
    deps = memo.deps(store, load_testdeps) if memo is not None else load_testdeps(store)
    out = _Collector()
    for test, why in (still_failing(deps, head, hashes) if deps is not None else {}).items():
        assert deps is not None
        if (given := existing(deps, layout, test)) is not None:
            out.tests[given] = why
    impact.selection = out.selection()
    impact.provenance = (
        "selection: the change is only comments or blank lines, the same code as HEAD: "
        "no test can run differently"
    )
    return impact


def _select_with_deps(
    layout: Layout,
    cache: SideImports,
    graph: _Graph,
    deps: RecordedDeps,
    narrowing: Narrowing,
    config: LadderConfig,
    deleted: set[str],
    changed_side: set[str],
    out: _Collector,
) -> str:
    """Tests from the recorded data; the import graph for the files it cannot speak for.
    Returns a line saying which part came from where."""
    gone = {rel for rel in narrowing.extra if not (layout.root / rel).exists()}
    _, extra_side = _classify(layout, narrowing.extra, deleted | gone, config, out)
    # A single-file module is judged by the data like a package file (narrowing.py): its
    # importers run whole only where the data cannot speak for it (`fallback`, `run_side`).
    single = layout.module_files
    changed_side = {rel for rel in changed_side if rel not in single}
    changed_side |= {rel for rel in narrowing.fallback if rel in single}
    for why in narrowing.unusable:
        out.widen_full(why)
    fallback = {m for rel in narrowing.fallback if (m := layout.module_of(rel)) is not None}
    try:
        affected = graph.downstream(fallback)
    except (grimp.exceptions.SourceSyntaxError, ValueError, OSError) as exc:
        out.widen_full(f"import graph unavailable ({exc})")
        return f"dependency data not used: import graph unavailable ({exc})"
    because = "; ".join(sorted(set(narrowing.fallback.values()))[:3])
    graph_files: set[str] = set()
    for module in sorted(affected):
        path = layout.file_of(module)
        if path is not None and layout.runs_as_test(rel := layout.rel(path)):
            out.tests[rel] = f"{rel} is affected in the import graph ({because})"
            graph_files.add(rel)
    for rel, why in narrowing.files.items():
        out.tests.setdefault(rel, why)
    doubts = {rid: dict(tests) for rid, tests in narrowing.doubts.items()}
    doubt_moved_data(deps, narrowing, config, doubts)
    runs_graph = _per_run(layout, cache, graph, deps, narrowing, doubts)
    picked_ids = doubted(deps, narrowing, doubts)
    _emit(deps, layout, picked_ids, out)
    side = changed_side | extra_side
    if side or affected:
        before = set(out.tests) | set(out.folders)
        _select_side(layout, cache, affected, side, out)
        for picked in (out.tests, out.folders):
            for rel, why in picked.items():
                if rel not in before and "imports" in why and because:
                    picked[rel] = f"{why} ({because})"
                    graph_files.add(rel)
    parts = [f"{len(picked_ids)} test(s) from recorded dependency data ({deps.tests} on record)"]
    if graph_files or runs_graph:
        why = because or "; ".join(sorted(runs_graph)[:3])
        parts.append(f"{len(graph_files) + len(runs_graph)} by the import graph ({why})")
    if narrowing.files:
        parts.append(f"{len(narrowing.files)} test file(s) without data at their content, whole")
    return "selection: " + ", ".join(parts)


def _emit(deps: RecordedDeps, layout: Layout, picked: dict[str, str], out: _Collector) -> None:
    """Selected recorded tests as pytest args: a file whole when every test it holds now is
    selected, else the node ids that exist in it as it is (a test gone since is left out)."""
    by_file: dict[str, dict[str, str]] = {}
    for test, why in picked.items():
        by_file.setdefault(test.partition("::")[0], {})[test] = why
    for rel, tests in sorted(by_file.items()):
        held = deps.complete.get(rel, {}).get(sha256_of(layout.root / rel) or "")
        if held and set(held) <= set(tests):
            out.tests.setdefault(rel, next(iter(tests.values())))
            continue
        for test, why in tests.items():
            target = existing(deps, layout, test)
            if target is not None:
                out.tests.setdefault(target, why)


def _per_run(
    layout: Layout,
    cache: SideImports,
    graph: _Graph,
    deps: RecordedDeps,
    narrowing: Narrowing,
    doubts: dict[str, dict[str, str]],
) -> set[str]:
    """Each run's own stale files (`run_fallback`, `run_side`): the test files they reach
    through the import graph and test-side imports, then that run's tests in those files
    only — a run recorded after the file changed speaks for its own tests. Adds them to
    `doubts`; returns why the import graph decided, for the notes."""
    memo: dict[frozenset[str], _Collector] = {}
    used: set[str] = set()
    for rid, run in deps.runs.items():
        stale = narrowing.run_fallback.get(rid, {})
        side = narrowing.run_side.get(rid, {})
        if not stale and not side:
            continue
        owned = [run.tests[i] for i in deps.owned(run)]
        if not owned:
            continue
        key = frozenset(stale) | frozenset(f"side:{s}" for s in side)
        if key not in memo:
            reached = _Collector()
            modules = {m for rel in stale if (m := layout.module_of(rel)) is not None}
            affected = graph.downstream(modules)
            for module in affected:
                path = layout.file_of(module)
                if path is not None and layout.runs_as_test(rel := layout.rel(path)):
                    reached.tests[rel] = f"{rel} is affected in the import graph"
            single = {rel: why for rel, why in stale.items() if rel in layout.module_files}
            reasons = {**single, **side}
            _select_side(layout, cache, affected, set(reasons), reached, reasons)
            memo[key] = reached
        reached = memo[key]
        for test in owned:
            rel = test.partition("::")[0]
            why = reached.tests.get(rel) or next(
                (w for f, w in reached.folders.items() if f == "." or rel.startswith(f + "/")),
                None,
            )
            if why is not None:
                doubts.setdefault(rid, {}).setdefault(test, why)
                used.update(stale.values())
                used.update(side.values())
    return used


def _select_side(
    layout: Layout,
    cache: SideImports,
    affected: set[str],
    changed_side: set[str],
    out: _Collector,
    reasons: dict[str, str] | None = None,
) -> None:
    imports, index = side_graph(layout, cache)
    why: dict[str, str] = {rel: (reasons or {}).get(rel, f"{rel} changed") for rel in changed_side}
    for rel, names in imports.items():
        if rel in why:
            continue
        for name in sorted(names):
            hit = next((p for p in _prefixes(name) if p in affected), None)
            if hit is not None:
                why[rel] = f"{rel} imports {hit}"
                break
    # Propagate through test-side imports (helpers imported by tests) until nothing changes.
    grew = True
    while grew:
        grew = False
        for rel, names in imports.items():
            if rel in why:
                continue
            for name in names:
                dep = next((index[p] for p in _prefixes(name) if p in index), None)
                if dep is not None and dep in why and dep != rel:
                    why[rel] = f"{rel} imports {dep}"
                    grew = True
                    break
    for rel, reason in why.items():
        name = rel.rsplit("/", 1)[-1]
        if name == "conftest.py":
            out.folders.setdefault(_folder_of(rel), f"{reason} (conftest widens to its folder)")
        elif layout.is_test(rel):
            out.tests[rel] = reason


def unrecorded(
    layout: Layout,
    config: LadderConfig,
    cache_dir: Path,
    memo: SelectionMemo | None,
    *,
    head: str | None,
    hashes: dict[str, str],
    git_root: Path | None = None,
) -> Selection | None:
    """The tests whose recorded dependency data cannot vouch for the tree as it is now (none
    recorded, or recorded when a file they depend on had other content); None when every
    test's record holds. Blocking. What the background recording runs, and what tells which
    failed tests passed on HEAD's content (`layout` an export of HEAD, `git_root` the
    project's repository: pytest_head.py)."""
    store = deps_store_dir(cache_dir.parent)
    deps = memo.deps(store, load_testdeps) if memo is not None else load_testdeps(store)
    if deps is None or not deps.records:
        return Selection(full=True, reasons=["no test dependency data recorded yet"])
    out = _Collector()
    graph = _Graph(layout, cache_dir, memo)
    side = memo.side_imports(cache_dir) if memo is not None else SideImports(cache_dir)
    narrowing = narrow(layout, deps, [], head, hashes, git_root)
    _select_with_deps(layout, side, graph, deps, narrowing, config, set(), set(), out)
    selection = out.selection()
    return selection if selection.full or selection.tests else None


def warm_graph(layout: Layout, cache_dir: Path, memo: SelectionMemo) -> int:
    """Build the packages' import graph into `memo` (the warm-up); its number of modules."""
    if not layout.packages:
        return 0
    graph = _Graph(layout, cache_dir, memo)
    side_graph(layout, memo.side_imports(cache_dir))  # the test side's imports, cached too
    return len(graph.modules())


def explicit_selection(filters: list[str]) -> Selection:
    """A selection given by the caller: node ids, paths, `-k EXPR` or `-m EXPR`."""
    return Selection(full=False, tests=list(filters), reasons=["explicit filter"], filtered=True)
