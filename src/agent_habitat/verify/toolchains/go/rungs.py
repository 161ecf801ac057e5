"""Go's five rungs: `diagnose.files` (gofmt -d and go vet -json on the touched files'
packages), `compile.project` and `build.affected` (go build of the affected packages),
`test.scoped` (go test -json of the touched packages and their importers) and `test.full`
(go test ./...). When test.scoped follows in the climb, compile.project leaves it the
affected packages that have tests: its go test compiles them anyway. Findings are compared
with the same tool on HEAD's export (head.py), and a red test rung's failed tests are run
there too: one already failing at HEAD is not red; so are its packages that did not build
(head_builds.py): one that already failed to build at HEAD, with the same errors, is not
red."""

from __future__ import annotations

import os
import shutil
from collections import OrderedDict
from pathlib import Path, PurePosixPath

import anyio
import anyio.to_thread

from ...baseline import fingerprint
from ...models import RungName, RungResult, RungState, Selection
from ...rungs.compare import settle
from ...rungs.context import RungContext, from_outcome, nothing_to_do, skipped
from ...rungs.head_tests import settle_tests
from ..base import Rung
from .comments import comments_only
from .detect import owns
from .head import Step, on_head, test_key, tests_on_head
from .head_builds import BuildsOnHead, settle_builds
from .linters import Linted, run_linters
from .listkey import list_key
from .parse import (
    code_names_a_kind,
    parse_build,
    parse_gofmt_diff,
    parse_test_events,
    parse_vet,
)
from .project import LIST_FIELDS, Affected, Package, affected, dirs_of, parse_list
from .verdicts import first_of, red_reason, settled

__all__ = ["RUNNERS"]

_MISSING = "go is not on PATH; install Go (https://go.dev/dl/) to verify this Go project"
_GRAPHS: OrderedDict[tuple[str, str], dict[str, Package]] = OrderedDict()
"""(root, listkey.list_key) → the package graph go list gave for it."""
_LISTED_BY: dict[tuple[str, str], str] = {}
"""(root, listkey) → the climb that ran that go list: a later climb says it reused it."""
_USED: dict[str, str] = {}
"""Climb → the earlier climb whose go list it reused."""
_GRAPH_NOTE = "package graph: go list of climb {climb} (nothing go list reads changed since)"
_COMMENTS: OrderedDict[tuple[str, str, tuple[str, ...]], int] = OrderedDict()
"""(root, snapshot, touched) → how many touched Go files changed only in comments."""
_LISTING: OrderedDict[str, anyio.Lock] = OrderedDict()
"""Climb → the lock its rungs take to list the packages and to read HEAD's touched files
for the comments check: compile.project and test.scoped start together beside
diagnose.files (verify/ahead.py), and one go list and one git cat-file serve both."""


def _go(ctx: RungContext) -> str | None:
    return shutil.which("go", path=ctx.process_env().get("PATH"))


def _gofmt(go: str) -> str:
    beside = Path(go).resolve().parent / "gofmt"
    return str(beside) if beside.is_file() else (shutil.which("gofmt") or "gofmt")


def _missing(ctx: RungContext, rung: RungName) -> RungResult:
    return skipped(ctx, rung, _MISSING, missing="go")


def _go_touched(ctx: RungContext) -> list[str]:
    return [p for p in ctx.touched if owns(p)]


def _own_code(rel: str) -> bool:
    parts = PurePosixPath(rel).parts
    return rel.endswith(".go") and "vendor" not in parts and "testdata" not in parts


async def _graph(ctx: RungContext, rung: RungName, go: str) -> dict[str, Package] | str:
    """The project's packages (`go list -e -test`): listed again only when what go list
    reads changed since a climb that listed (listkey.py), else once per climb."""
    async with _lock(ctx):
        return await _listed(ctx, rung, go)


def _lock(ctx: RungContext) -> anyio.Lock:
    if ctx.ladder_id not in _LISTING:
        _LISTING[ctx.ladder_id] = anyio.Lock()
        while len(_LISTING) > 16:
            _LISTING.popitem(last=False)
    return _LISTING[ctx.ladder_id]


async def _listed(ctx: RungContext, rung: RungName, go: str) -> dict[str, Package] | str:
    found = await anyio.to_thread.run_sync(list_key, ctx.root, ctx.snapshot, go, ctx.process_env())
    key = (str(ctx.root), found or f"{ctx.ladder_id} {ctx.snapshot.id}")
    if key in _GRAPHS:
        _GRAPHS.move_to_end(key)
        _USED[ctx.ladder_id] = _LISTED_BY.get(key, "")
        while len(_USED) > 16:
            del _USED[next(iter(_USED))]
        return _GRAPHS[key]
    argv = [go, "list", "-e", "-test", f"-json={LIST_FIELDS}", "./..."]
    outcome = await ctx.run(rung, argv, suffix=".list.json", reap_leftovers=False)
    if outcome.exit_code != 0 or outcome.timed_out:
        return f"go list failed (exit {outcome.exit_code}): {outcome.tail.strip()[-300:]}"
    graph = parse_list(outcome.text, ctx.root)
    _GRAPHS[key] = graph
    _LISTED_BY[key] = ctx.ladder_id
    while len(_GRAPHS) > 8:
        gone, _ = _GRAPHS.popitem(last=False)
        _LISTED_BY.pop(gone, None)
    return graph


async def _comments_only(ctx: RungContext) -> int:
    """`comments.comments_only` of the change, once per snapshot (both rungs ask; HEAD's
    content of the touched files is read once, for go list's key too)."""
    snapshot = ctx.snapshot
    if not snapshot.in_git or snapshot.head is None:
        return 0
    key = (str(ctx.root), snapshot.id, tuple(ctx.touched))
    async with _lock(ctx):
        if key not in _COMMENTS:
            found = await anyio.to_thread.run_sync(
                comments_only, ctx.root, snapshot.head, ctx.touched
            )
            _COMMENTS[key] = found
            while len(_COMMENTS) > 16:
                _COMMENTS.popitem(last=False)
    return _COMMENTS[key]


def _graph_notes(ctx: RungContext) -> list[str]:
    """Says so when this climb's graph came from an earlier climb's go list."""
    by = _USED.get(ctx.ladder_id)
    return [_GRAPH_NOTE.format(climb=by)] if by and by != ctx.ladder_id else []


def _error(ctx: RungContext, rung: RungName, why: str, tool: str) -> RungResult:
    return RungResult(rung=rung, task=ctx.task(rung), state="error", reason=why, tool=tool)


async def diagnose_files(ctx: RungContext) -> RungResult:
    rung: RungName = "diagnose.files"
    files = [p for p in ctx.existing(ctx.touched) if _own_code(p)]
    if not files:
        return nothing_to_do(ctx, rung, f"no Go files among the {len(ctx.touched)} touched files")
    go = _go(ctx)
    if go is None:
        return _missing(ctx, rung)
    dirs = sorted({"./" + PurePosixPath(f).parent.as_posix() for f in files})
    dirs = ["." if d == "./." else d for d in dirs]
    gofmt = [_gofmt(go), "-d"]
    fmt = await ctx.run(rung, [*gofmt, *files], suffix=".gofmt.out", reap_leftovers=False)
    if fmt.timed_out or fmt.signal is not None:
        return from_outcome(ctx, rung, fmt, tool="gofmt")
    vet_argv = [go, "vet", "-json"]
    mine = set(files)
    linted = Linted()

    async def lint() -> None:
        nonlocal linted
        linted = await run_linters(ctx, rung, dirs, mine)

    async with anyio.create_task_group() as group:
        group.start_soon(lint)
        vet = await ctx.run(rung, [*vet_argv, *dirs])
    formatting = parse_gofmt_diff(fmt.text, ctx.root)
    found = parse_vet(vet.text, ctx.root)
    diagnostics = [*formatting, *(d for d in found if d.file in mine), *linted.diagnostics]
    state: RungState | None = "red" if diagnostics else "green"
    reason = None
    if vet.exit_code not in (0, 1) or (vet.exit_code == 1 and not found):
        state, reason = "error", f"go vet failed (exit {vet.exit_code}): {vet.tail.strip()[-300:]}"
    elif fmt.exit_code not in (0, 1, 2):
        state, reason = "error", f"gofmt failed (exit {fmt.exit_code}): {fmt.tail.strip()[-300:]}"
    tool = "+".join(["gofmt", "go vet", *linted.names])
    notes = [
        f"go: gofmt -d on {len(files)} file(s), go vet on {len(dirs)} package(s)",
        *linted.notes,
    ]
    vetted = len(diagnostics) - len(formatting) - len(linted.diagnostics)
    if (elsewhere := len(found) - vetted) > 0:
        notes.append(f"{elsewhere} go vet finding(s) in untouched files left out")
    result = from_outcome(
        ctx,
        rung,
        vet,
        tool=tool,
        state=state,
        reason=reason,
        diagnostics=diagnostics,
        notes=notes,
    )
    if result.state == "red":
        names = "/".join(tool.split("+"))
        result.reason = f"{len(diagnostics)} {names} finding(s), first {first_of(diagnostics)}"
    steps = (
        Step(tuple(gofmt), tuple(files), lambda text, at: parse_gofmt_diff(text, at), (0, 1, 2)),
        Step(tuple(vet_argv), tuple(dirs), parse_vet),
        *linted.steps,
    )
    result = await settle(
        ctx, result, lambda head: on_head(ctx, rung, head, tool, steps), code_names_a_kind
    )
    if linted.failed is not None:
        # Red stays red (what the others found is the change's); never green for a linter
        # that did not run.
        result.notes.append(linted.failed)
        if result.state == "green":
            result.state, result.reason = "error", linted.failed
    if linted.missing:
        # Not green for a check it did not make: the ladder is incomplete, naming the tool.
        result.missing = ", ".join(lin.name for lin in linted.missing)
        if result.state == "green":
            result.reason = "; ".join(n for n in result.notes if "but not installed" in n)
    return result


async def _affected(
    ctx: RungContext, rung: RungName
) -> tuple[str, dict[str, Package], Affected] | RungResult:
    """`go`, the packages (`go list`) and what the change affects; or the rung's result when
    no Go file was touched, there is no `go`, or `go list` failed."""
    if not _go_touched(ctx):
        return nothing_to_do(ctx, rung, f"no Go file among the {len(ctx.touched)} touched files")
    if comments := await _comments_only(ctx):
        return nothing_to_do(
            ctx,
            rung,
            f"the change is only comments in {comments} Go file(s), the same code as HEAD: "
            "nothing compiles or tests differently (gofmt and go vet answer in diagnose.files)",
        )
    go = _go(ctx)
    if go is None:
        return _missing(ctx, rung)
    graph = await _graph(ctx, rung, go)
    if isinstance(graph, str):
        return _error(ctx, rung, graph, "go list")
    return go, graph, affected(graph, _go_touched(ctx))


async def _build(ctx: RungContext, rung: RungName, also: str = "") -> RungResult:
    found = await _affected(ctx, rung)
    if isinstance(found, RungResult):
        return found
    go, graph, aff = found
    deferred = _compiled_by_tests(ctx, rung, graph, aff)
    targets = (
        ["./..."] if aff.full else dirs_of(graph, [p for p in aff.packages if p not in deferred])
    )
    if deferred and not targets:
        return nothing_to_do(ctx, rung, _deferred_note(deferred, graph))
    if not targets:
        return nothing_to_do(ctx, rung, "the touched Go files are in no package (go list)")
    argv = [go, "build", "-o", os.devnull]
    outcome = await ctx.run(rung, [*argv, *targets])
    diagnostics = parse_build(outcome.text, ctx.root)
    state: RungState | None = None
    reason = None
    if outcome.exit_code == 1 and not diagnostics:
        state, reason = "error", f"go build failed (exit 1): {outcome.tail.strip()[-300:]}"
    elif outcome.exit_code not in (0, 1):
        state, reason = (
            "error",
            f"go build failed (exit {outcome.exit_code}): {outcome.tail.strip()[-300:]}",
        )
    what = (
        "every package (" + "; ".join(aff.reasons[:3]) + ")"
        if aff.full
        else f"{len(targets)} of {len(aff.packages)} affected package(s): "
        f"{len(aff.touched)} touched, {len(aff.importers)} importing them"
    )
    notes = [
        f"go: go build of {what}; test files are compiled by test.scoped",
        *([_deferred_note(deferred, graph)] if deferred else []),
        *([also] if also else []),
        *_graph_notes(ctx),
    ]
    result = from_outcome(
        ctx,
        rung,
        outcome,
        tool="go build",
        state=state,
        reason=reason,
        diagnostics=diagnostics,
        notes=notes,
    )
    if result.state == "red" and diagnostics:
        result.reason = f"{len(diagnostics)} go build error(s), first {first_of(diagnostics)}"
    steps = (Step(tuple(argv), tuple(targets), lambda text, at: parse_build(text, at)),)
    return await settle(
        ctx, result, lambda head: on_head(ctx, rung, head, "go build", steps), code_names_a_kind
    )


def _compiled_by_tests(
    ctx: RungContext, rung: RungName, graph: dict[str, Package], aff: Affected
) -> list[str]:
    """The affected packages `compile.project` leaves to this climb's `test.scoped`: those
    with tests, whose every file go test compiles (the package, or its test variant with the
    same files plus the tests: cgo, assembly and embeds included) and links into a test
    binary, and those a tested package imports, which go test compiles as dependencies; so a
    compile or link error is still red, by go test, before any test runs. Only
    when test.scoped follows in the climb, not when build.affected builds them anyway, and
    never for the whole module (a package go list did not list is built by `./...`)."""
    if rung != "compile.project" or aff.full or "test.scoped" not in ctx.rungs:
        return []
    if "build.affected" in ctx.rungs:
        return []
    tested = [graph[t] for t in aff.tests if t in graph]
    # A package without tests that a tested package imports (its tests' imports included:
    # `deps` holds the test variants' too) is compiled by go test as that test binary's
    # dependency, its every file, with go test's flags; a main package never is (nothing
    # imports it), so go build still links it.
    return sorted(
        p
        for p in aff.packages
        if (p in aff.tests and graph[p].has_tests) or any(p in t.deps for t in tested)
    )


def _deferred_note(deferred: list[str], graph: dict[str, Package]) -> str:
    names = ", ".join(deferred[:3]) + (f" (+{len(deferred) - 3} more)" if len(deferred) > 3 else "")
    with_tests = sum(graph[p].has_tests for p in deferred if p in graph)
    what = f"{with_tests} with tests"
    if with_tests < len(deferred):
        what += f", {len(deferred) - with_tests} imported by a tested package"
    return (
        f"{len(deferred)} affected package(s) with tests or imported by one ({what}: {names}) "
        "are compiled by test.scoped's go test, which builds them before running any test: "
        "a compile error there is red"
    )


async def compile_project(ctx: RungContext) -> RungResult:
    return await _build(ctx, "compile.project")


async def build_affected(ctx: RungContext) -> RungResult:
    return await _build(
        ctx,
        "build.affected",
        "the same go build as compile.project: for Go the compile is the build (a cache hit "
        "in go's build cache when both rungs run)",
    )


async def _go_test(
    ctx: RungContext,
    rung: RungName,
    argv: list[str],
    targets: list[str],
    graph: dict[str, Package],
    notes: list[str],
) -> RungResult:
    outcome = await ctx.run(rung, [*argv, *targets])
    dirs = {name: ctx.root / p.dir for name, p in graph.items()}
    run = parse_test_events(outcome.text, ctx.root, dirs)
    state: RungState | None = None
    reason = None
    if run.died is not None:
        who, _sig = run.died
        state, reason = "died", f"{who} died: {run.died_how[:200]}"
    elif outcome.exit_code == 0:
        if not any(a == "pass" for a in run.packages.values()):
            return nothing_to_do(ctx, rung, "go test ran no package with tests")
        if not run.passed and run.skipped:
            # Green means something was checked: packages "ok" over t.Skip alone were not.
            why = f"every test it ran was skipped ({run.skipped} skipped, none passed)"
            return nothing_to_do(ctx, rung, why + ": nothing was checked")
        state = "green"
    elif outcome.exit_code in (1, 2) and run.failures:
        state = "red"
        reason = red_reason(run)
    else:
        state, reason = (
            "error",
            f"go test failed (exit {outcome.exit_code}): {outcome.tail.strip()[-300:]}",
        )
    notes = [
        *notes,
        f"go test: {run.passed} test(s) passed, {run.failed} failed, {run.skipped} skipped in "
        f"{len(run.packages)} package(s) ({run.cached} from go's test cache)",
    ]
    result = from_outcome(
        ctx,
        rung,
        outcome,
        tool="go test",
        state=state,
        reason=reason,
        diagnostics=run.failures,
        notes=notes,
    )
    if result.state == "died" and result.signal is None and run.died is not None:
        result.signal = run.died[1]
    folders = {name: p.dir for name, p in graph.items()}
    builds = BuildsOnHead()
    if result.state == "red" and run.failed_builds:
        builds = await settle_builds(ctx, rung, run, graph, argv[0], argv)
    result = await settle_tests(
        ctx,
        result,
        cache_key=fingerprint("go test on HEAD", ctx.snapshot.head or "", *argv),
        key_of=test_key,
        run_on_head=lambda head, keys: tests_on_head(ctx, rung, head, argv, keys, folders),
    )
    return settled(result, run, builds) if run.failed_builds else result


def _selection(graph: dict[str, Package], aff: Affected) -> Selection:
    """The result's `Selection`: the folders of the packages whose tests run (`.` for the
    module's root package), and why each was chosen."""
    if aff.full:
        return Selection(full=True, reasons=list(aff.reasons))
    folders = [graph[name].dir for name in aff.tests if name in graph]
    return Selection(full=False, tests=sorted(folders), reasons=list(aff.reasons))


async def scoped_suite(ctx: RungContext) -> RungResult:
    rung: RungName = "test.scoped"
    found = await _affected(ctx, rung)
    if isinstance(found, RungResult):
        return found
    go, graph, aff = found
    if not ctx.selection.filtered:
        ctx.selection = _selection(graph, aff)
    if not aff.tests:
        return nothing_to_do(ctx, rung, "no Go package with tests is affected by the change")
    why = "; ".join(aff.reasons[:5]) + (
        f" (+{len(aff.reasons) - 5} more)" if len(aff.reasons) > 5 else ""
    )
    notes = [
        f"go: go test of {len(aff.tests)} package(s) — {'whole module' if aff.full else why}",
        "go test's own vet step is off here (-vet=off): go vet runs in diagnose.files, "
        "against HEAD",
        *_graph_notes(ctx),
    ]
    targets = ["./..."] if aff.full else aff.tests
    return await _go_test(ctx, rung, [go, "test", "-json", "-vet=off"], targets, graph, notes)


async def full_suite(ctx: RungContext) -> RungResult:
    rung: RungName = "test.full"
    go = _go(ctx)
    if go is None:
        return _missing(ctx, rung)
    graph = await _graph(ctx, rung, go)
    return await _go_test(
        ctx,
        rung,
        [go, "test", "-json"],
        ["./..."],
        graph if isinstance(graph, dict) else {},
        ["go: go test ./... (the whole module, go's own vet step included)"],
    )


RUNNERS: dict[RungName, Rung] = {
    "diagnose.files": diagnose_files,
    "compile.project": compile_project,
    "build.affected": build_affected,
    "test.scoped": scoped_suite,
    "test.full": full_suite,
}
