"""`test.scoped` and `test.full` for a Cargo project: `cargo test`, its failures as findings.

`test.scoped` runs the tests of every affected crate (the touched crates, the crates that
read a touched file through `include_str!` and the like, and, through path dependencies,
every crate that depends on them). A change under a crate's `tests/` reaches
only its integration tests: the touched test target alone, or all of them for shared code
there (`tests/util/mod.rs`). A change only inside `#[cfg(test)] mod` blocks of its sources
(test_code.py) reaches only its unit-test harnesses (`--lib`, `--bins`): no doc test,
integration test or other crate links that code. Within a crate nothing narrower is safe:
any unit test may call the touched module, and cargo keeps no record of which does. An
explicit filter (`--filter`) goes to libtest as its name filters. A test binary killed by a
signal makes the rung `died`; the substrate's variables reach every test process
(`ctx.run`).

The tests build as the user's own `cargo test` builds them, in the project's `target/`:
the units of the user's last build are reused, and the user's next `cargo test` finds the
verdict's fresh. Their work starts beside `diagnose.files` (verify/ahead.py), whose clippy
checks in the habitat's own target folder, so neither waits for the other's cargo lock.

HEAD's build of the same test targets starts beside the tests' runs, once their build
finished (head_tests.prebuild_on_head): a red run asks HEAD about its failed tests, whose
binaries are then built or under way (strsim's red verdict waited for HEAD's build after
its own tests: 4.9 + 7.1 s of a 28 s verdict at load 25); a run that is not red cancels it.
Once that build is done, the failures the run has named so far are asked of HEAD while it
goes on (head_ahead.py), so the ask at its end runs only the ones no batch answered.

A build that stops at compile errors is red only for errors HEAD does not have: judged by the
crates' own check on both sides (lib_check.py), else by HEAD's build of the same tests. The
tests' own build often reports a compile error before clippy's rung does, and ends the climb
there (verify/ahead.py): without HEAD's word it was red for an error HEAD already had."""

from __future__ import annotations

import logging
import shlex
from dataclasses import dataclass, field

import anyio

from ...baseline import BaseResult
from ...command import Outcome
from ...head import HeadTree
from ...models import Diagnostic, RungName, RungResult, RungState, Selection
from ...rungs.compare import settle
from ...rungs.context import RungContext, from_outcome, nothing_to_do
from ...rungs.head_tests import HeadRun, settle_tests
from ...stopping import ending_red
from .cargo import (
    TOOL_NOTE,
    build_verdict,
    cargo_rung,
    graph_note,
    on_head,
    packages,
)
from .change import affected_of
from .head_ahead import ask_ahead
from .head_tests import (
    cache_key,
    failed_on_head,
    head_argv,
    narrowed,
    prebuild_on_head,
    test_key,
)
from .lib_check import decided_by, head_early, new_lib_errors, tests_build
from .messages import LibtestReport, compiler_messages, libtest_report
from .metadata import Affected, CrateGraph
from .spool_watch import BUILD_SUCCEEDED, compile_error, said, said_line

__all__ = ["TEST_BASE", "full_suite", "scoped_suite"]

logger = logging.getLogger(__name__)

TOOL = "cargo test"
TEST_BASE = ["cargo", "test", "--message-format=json", "--no-fail-fast"]
"""Every cargo test run's start (the warm-up's HEAD build starts the same: warm.py)."""


def _no_work(ctx: RungContext) -> str | None:
    if ctx.touched or ctx.selection.filtered:
        return None
    return "no touched files"


def _state(outcome: Outcome, errors: list[Diagnostic], report: LibtestReport) -> RungState | None:
    if report.signal is not None:
        return "died"
    if outcome.exit_code == 0:
        return "green"
    if outcome.exit_code == 101 and (errors or report.failures):
        return "red"
    return "error" if outcome.exit_code is not None else None


async def _cargo_test(
    ctx: RungContext, rung: RungName, graph: CrateGraph, runs: list[list[str]], why: list[str]
) -> RungResult:
    """Each argv of `runs` in turn (one cargo test per set of targets), as one result; HEAD's
    build of the same test targets beside their runs (`prebuild_on_head`), from the end of
    the first one's build (it took the CPU that build needed: strsim's green first verify
    built HEAD's tests for 8.4 s of its 10.3 s cargo test at load 25), cancelled as soon as
    HEAD's outcomes are not (or no longer) needed. From the first run's first compile error
    on, the crates' own check (lib_check.py) that judges it starts, before the build ends."""
    head_build = _HeadBuild()
    judging = anyio.CancelScope()

    async def judge() -> None:
        with judging:
            if await said_line(ctx.spool(rung, ".out"), compile_error, head_build.tests_ended):
                await new_lib_errors(ctx, rung, graph)  # `_settle_build` takes its answer

    async def prebuild() -> None:
        with head_build.scope:
            try:
                await said(ctx.spool(rung, ".out"), BUILD_SUCCEEDED, head_build.tests_ended)
                await prebuild_on_head(ctx, rung, runs)
            except OSError:
                logger.debug("HEAD's test build could not start", exc_info=True)
            finally:
                head_build.done.set()

    early = anyio.CancelScope()

    async def head_check() -> None:
        with early:
            await head_early(ctx, rung, graph, ctx.spool(rung, ".out"), built)

    ahead = anyio.CancelScope()

    async def ask() -> None:
        with ahead:
            await ask_ahead(
                ctx,
                rung,
                graph,
                runs[0],
                spool=ctx.spool(rung, ".out"),
                built=head_build.done,
                ended=head_build.tests_ended,
                asking=head_build.asking,
                cache_key=lambda: _cache_key(ctx, runs),
            )

    with tests_build(ctx, ctx.spool(rung, ".out")) as built:
        async with anyio.create_task_group() as beside:
            beside.start_soon(head_check)
            beside.start_soon(prebuild)
            beside.start_soon(judge)
            beside.start_soon(ask)
            try:
                result = await _tested(ctx, rung, graph, runs, why, head_build, built)
                if result.state in ("red", "died", "error"):
                    ending_red()  # what it cancels now is reaped after the verdict
            finally:
                head_build.scope.cancel()
                judging.cancel()
                early.cancel()
                ahead.cancel()
    return result


@dataclass
class _HeadBuild:
    """HEAD's test build under way beside the tests (`prebuild_on_head`)."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)
    tests_ended: anyio.Event = field(default_factory=anyio.Event)
    asking: anyio.Lock = field(default_factory=anyio.Lock)
    """Held by a batch of failed tests asked of HEAD while the tests run (head_ahead.py)."""


def _cache_key(ctx: RungContext, runs: list[list[str]]) -> str:
    """Where HEAD's outcomes of the tests of `runs` are kept (rungs/head_tests.py)."""
    return cache_key(ctx.snapshot.head or "", [a for argv in runs for a in argv], ctx.root)


def _notes(ctx: RungContext, runs: list[list[str]], why: list[str]) -> list[str]:
    notes = [TOOL_NOTE.format(tool=TOOL), *why, *graph_note(ctx)]
    if (ctx.root / ".config" / "nextest.toml").is_file():
        notes.append(
            "the project configures cargo-nextest (.config/nextest.toml); this rung runs "
            "cargo test — the same #[test] functions, one process per test binary"
        )
    if len(runs) > 1:
        notes.append("ran: " + " && ".join(shlex.join(argv) for argv in runs))
    return notes


async def _tested(
    ctx: RungContext,
    rung: RungName,
    graph: CrateGraph,
    runs: list[list[str]],
    why: list[str],
    head_build: _HeadBuild,
    built: anyio.Event,
) -> RungResult:
    results: list[tuple[Outcome, list[Diagnostic], LibtestReport]] = []
    for argv in runs:
        suffix = f".{len(results)}.out" if results else ".out"
        outcome = await ctx.run(rung, argv, suffix=suffix)
        built.set()  # the first run's build, whatever it said, is over (lib_check.tests_build)
        errors = [
            d
            for d in compiler_messages(outcome.text, ctx.root, tool="rustc")
            if d.severity == "error"
        ]
        results.append((outcome, errors, libtest_report(outcome.text, ctx.root, graph.dir_of)))
    worst = next(
        (r for r in results if _state(*r) == "died" or r[0].timed_out),
        next((r for r in results if _state(*r) != "green"), results[-1]),
    )
    outcome, _, report = worst
    diagnostics = [d for _, errors, rep in results for d in (*errors, *rep.failures)]
    passed = sum(rep.passed for _, _, rep in results)
    failed = sum(rep.failed for _, _, rep in results)
    state = _state(*worst)
    notes = _notes(ctx, runs, [*why, f"{passed} passed, {failed} failed"])
    if state == "green" and passed + failed == 0:
        return nothing_to_do(ctx, rung, "the affected crates have no tests (cargo ran 0)")
    result = from_outcome(
        ctx, rung, outcome, tool=TOOL, state=state, diagnostics=diagnostics, notes=notes
    )
    if result.state == "died":
        result.signal = report.signal
        result.reason = f"test binary {report.died} killed by {report.signal}"
    elif result.state == "red":
        errors = [d for d in diagnostics if d.source == "rustc"]
        first = diagnostics[0]
        what = (
            f"{len(errors)} compile error(s)" if errors else f"{len(diagnostics)} test failure(s)"
        )
        result.reason = f"{what}, first {first.message.splitlines()[0][:200]}"
        result = build_verdict(result)
    elif result.state == "error" and result.reason is None:
        result.reason = (
            f"cargo test failed to run (exit {outcome.exit_code}): " + (outcome.tail.strip()[-300:])
        )

    if result.state == "red" and any(d.source == "rustc" for d in result.diagnostics):
        result = await _settle_build(ctx, rung, graph, result, runs)
        if result.state == "green" and passed + failed == 0:
            # Every compile error was HEAD's too, but no test ran: nothing was checked,
            # which is not green (nor the change's red): the build could not run, as at HEAD.
            first = next(d for d in result.diagnostics if d.severity == "error")
            where = f"{first.file}:{first.line} " if first.file else ""
            result.state = "error"
            result.reason = (
                f"no test ran: the tests' build fails as at HEAD (not the change's), first "
                f"{where}{first.message.splitlines()[0][:160]}"
            )
        if result.state == "error" or (
            result.state == "red"
            and any(d.source != "cargo test" and not d.preexisting for d in result.diagnostics)
        ):
            ending_red()  # HEAD's test build under way is reaped after the verdict
            head_build.scope.cancel()  # no test ran where the build failed
            return result

    async def on_head(head: HeadTree, keys: list[str]) -> HeadRun | str:
        plan = narrowed(runs, [rep.reruns for _, _, rep in results], keys)
        ran = HeadRun(whole=plan is None)
        for argv in plan if plan is not None else runs:
            found = await failed_on_head(ctx, rung, head, argv, whole=plan is None)
            if isinstance(found, str):
                return found
            ran.failed.update(found.failed)
        return ran

    head_build.tests_ended.set()
    if result.state != "red" or not any(test_key(d) for d in result.diagnostics):
        head_build.scope.cancel()  # nothing to ask HEAD
    else:
        # HEAD's runs of the failed tests find its binaries built (one cargo at a time
        # builds in HEAD's target folder: they would wait for its lock anyway).
        await head_build.done.wait()
    # After the batch asked ahead under way, if one is: only what no batch answered is left.
    async with head_build.asking:
        return await settle_tests(
            ctx, result, cache_key=_cache_key(ctx, runs), key_of=test_key, run_on_head=on_head
        )


async def _settle_build(
    ctx: RungContext, rung: RungName, graph: CrateGraph, result: RungResult, runs: list[list[str]]
) -> RungResult:
    """A red run whose build stopped at compile errors: red only for errors HEAD does not
    have. First the crates' own check on both sides (lib_check.py, shared with clippy's
    rung); when it decides nothing, HEAD's build of the same test targets (its answer cached
    per HEAD, its units those HEAD's test runs use): an error it has too is pre-existing,
    and a build HEAD passes makes every error now the change's."""
    check = await new_lib_errors(ctx, rung, graph)
    if check is not None:
        return decided_by(result, check, "the tests' build's own errors")

    async def base(head: HeadTree) -> tuple[BaseResult, bool] | str:
        found: list[Diagnostic] = []
        code, cached = 0, True
        for argv in runs:
            built = [*head_argv(argv), "--no-run"]
            got = await on_head(
                ctx, rung, head, built, tool="rustc", keep=_error, env={}, suffix=".built.out"
            )
            if isinstance(got, str):
                return got
            found += got[0].findings
            code, cached = code or (got[0].exit_code or 0), cached and got[1]
        return BaseResult(findings=found, exit_code=code), cached

    return build_verdict(await settle(ctx, result, base))


def _error(d: Diagnostic) -> bool:
    return d.severity == "error"


def _target_file(graph: CrateGraph, crate: str, target: str) -> str:
    """An integration test target's root file (cargo metadata's), else its crate's folder."""
    for entry in graph.crates[crate].tests:
        file, _, name = entry.rpartition("=")
        if name == target:
            return file
    return graph.crates[crate].dir


def _selection(graph: CrateGraph, affected: Affected, whole: list[str]) -> Selection:
    """The result's `Selection`: the folders of the crates whose tests all run, the files
    of the integration test targets that run alone, and why each crate was chosen."""
    tests = [graph.crates[c].dir for c in whole if c in graph.crates]
    tests += [
        _target_file(graph, crate, target)
        for crate, targets in sorted(affected.only_tests.items())
        if crate in graph.crates
        for target in targets
    ]
    tests += [rel for _, files in sorted(affected.only_units.items()) for rel in files]
    return Selection(full=affected.every, tests=tests, reasons=list(affected.reasons))


@cargo_rung("test.scoped", no_work=_no_work)
async def scoped_suite(ctx: RungContext, graph: CrateGraph) -> RungResult:
    rung: RungName = "test.scoped"
    if ctx.selection.filtered:
        crates = (await affected_of(ctx, graph)).crates if ctx.touched else []
        scope = packages(crates) if crates else ["--workspace"]
        why = f"filtered: {' '.join(ctx.selection.tests)}"
        return await _cargo_test(
            ctx, rung, graph, [[*TEST_BASE, *scope, "--", *ctx.selection.tests]], [why]
        )
    affected = await affected_of(ctx, graph)
    alone = {*affected.only_tests, *affected.only_units}
    whole = [c for c in affected.crates if c not in alone]
    runs: list[list[str]] = []
    if whole:
        runs.append([*TEST_BASE, *packages(whole)])
    for crate in sorted(alone):
        units = graph.crates[crate].unit_tests if crate in affected.only_units else ()
        targets = affected.only_tests.get(crate, [])
        if units or targets:
            runs.append(
                [*TEST_BASE, "-p", crate, *units, *(a for t in targets for a in ("--test", t))]
            )
    ctx.selection = _selection(graph, affected, whole)
    if not runs:
        return nothing_to_do(ctx, rung, "no crate is affected by the change")
    shown = "; ".join(affected.reasons[:5])
    what = "every crate" if affected.every else f"crates {', '.join(affected.crates)}"
    return await _cargo_test(ctx, rung, graph, runs, [f"{what}: {shown}"])


@cargo_rung("test.full")
async def full_suite(ctx: RungContext, graph: CrateGraph) -> RungResult:
    return await _cargo_test(
        ctx, "test.full", graph, [[*TEST_BASE, "--workspace"]], ["whole workspace"]
    )
