"""`test.scoped` and `test.full` for Node. Scoped: in each affected workspace, its runner's
own affected-test mode — `vitest related <files> --run`, `jest --findRelatedTests <files>`,
or `node --test` on the test files that import a touched file (graph.py) — widened to the
workspace's whole suite when a touched file is deleted or configures the runner; a workspace
whose runner has no such mode (tape, mocha, ava, …) runs its `test` script whole, so a
scoped run never misses what the suite would catch. Full: the project's `test` script
through its package manager. Every process gets the substrate. A red test script is compared
with the same script on HEAD's export (script_head.py): a failure HEAD has too is not red."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import anyio.to_thread

from ...command import Outcome, take_report
from ...models import RungName, RungResult, RungState, Selection
from ...rungs.context import RungContext, from_outcome, nothing_to_do, skipped
from .comments import comments_only, refused
from .common import Tool, each, merge, mine, node_rung
from .compile import run_script
from .detect import SOURCE_SUFFIXES, NodeProject, Workspace
from .graph import related_tests, test_files
from .head_ahead import Ahead
from .head_tests import (
    KEYS,
    head_key,
    jest_like_on_head,
    name_node_failures,
    settle_jest_like,
    settle_node,
)
from .jest_config import cache_args
from .jest_warm import warm_jest
from .parsers import (
    junit_skipped,
    parse_jest_json,
    parse_node_junit,
    suite_counts,
    suite_skipped,
)
from .script_head import script_failures, settle_script
from .tap import tap_passed

__all__ = ["full_suite", "scoped_suite"]

SCOPED: RungName = "test.scoped"
FULL: RungName = "test.full"
_ENV = {"FORCE_COLOR": "0"}


def _no_change(ctx: RungContext) -> str | None:
    if ctx.selection.filtered:
        return None
    return None if mine(ctx) else "no touched JavaScript/TypeScript file or its configuration"


def _widen(ctx: RungContext, ws: Workspace, touched: list[str]) -> str | None:
    """Why the workspace's whole suite runs instead of the related tests, if it must."""
    for rel in touched:
        if not rel.endswith(SOURCE_SUFFIXES):
            return f"{rel} changed (configuration)"
        if not (ctx.root / rel).exists():
            return f"{rel} was deleted (its importers cannot be traced)"
    return None


def _all_skipped(exit_code: int | None, ran: int, skipped: int) -> str | None:
    """Why a passing run checked nothing: every test it ran was skipped (green means something
    was checked; the runners pass such a run)."""
    if exit_code != 0 or not ran or skipped < ran:
        return None
    return (
        f"node: every test it ran was skipped ({skipped} skipped, none passed): nothing was checked"
    )


def _reason(result: RungResult) -> None:
    if result.state == "red" and result.diagnostics:
        first = result.diagnostics[0].message.splitlines()[0][:200]
        result.reason = f"{len(result.diagnostics)} test failure(s), first {first}"


async def _run_jest_like(
    ctx: RungContext,
    project: NodeProject,
    ws: Workspace,
    runner: str,
    tool: Path,
    argv: list[str],
    env: dict[str, str],
    stream: Path,
    warm_notes: list[str],
) -> Outcome:
    """The tree's run: jest's warm runner's (telling each failed file to `stream`) when it
    can, else the CLI cold."""
    outcome = None
    if runner == "jest":
        outcome = await warm_jest(ctx, project, ws, tool, argv[1:], env, warm_notes, stream)
    if outcome is None:
        if runner == "jest":
            argv += await anyio.to_thread.run_sync(cache_args, ctx, ws.path)
        outcome = await ctx.run(SCOPED, argv, suffix=each(ws.rel), cwd=ws.path, extra_env=env)
    return outcome


async def _jest_like(
    ctx: RungContext,
    project: NodeProject,
    ws: Workspace,
    runner: str,
    files: list[str] | None,
    why: str,
) -> RungResult:
    tool = Tool(project, ws, runner, runner)
    if tool.path is None:
        return tool.missing(ctx, SCOPED, f"{ws.name} tests with {runner}")
    report = ctx.spool(SCOPED, ".json")
    paths = [str(ctx.root / f) for f in files or []]
    if runner == "vitest":
        mode = ["related", "--run", *paths] if files is not None else ["run"]
        argv = [str(tool.path), *mode, "--reporter=json", f"--outputFile={report}"]
        argv.append("--passWithNoTests")
    else:
        mode = ["--findRelatedTests", *paths] if files is not None else []
        # Coverage thresholds judge a whole suite; a scoped run is judged by its tests.
        argv = [str(tool.path), *mode, "--json", f"--outputFile={report}", "--ci"]
        argv += ["--passWithNoTests", "--coverage=false"]
    warm_notes: list[str] = []
    stream = ctx.spool(SCOPED, each(ws.rel, ".failed.jsonl"))
    await anyio.Path(stream).unlink(missing_ok=True)
    path = tool.path
    ahead = Ahead(
        ctx,
        stream,
        head_key(ctx, runner, ws),
        lambda head, keys: jest_like_on_head(ctx, SCOPED, project, ws, runner, path, head, keys),
    )
    async with anyio.create_task_group() as tg:
        if runner == "jest":  # the warm jest tells its failures as it goes (head_ahead.py)
            tg.start_soon(ahead.watch)
        outcome = await _run_jest_like(
            ctx, project, ws, runner, path, argv, _ENV, stream, warm_notes
        )
        if outcome.exit_code == 0 or not ahead.began:
            tg.cancel_scope.cancel()  # HEAD's answer is not needed, or settle_tests asks it
    await anyio.Path(stream).unlink(missing_ok=True)
    text = await take_report(report)
    counts = suite_counts(text)
    if counts is not None and counts[0] == 0 and outcome.exit_code == 0:
        return nothing_to_do(ctx, SCOPED, f"node: {runner} found no test related to the change")
    idle = _all_skipped(outcome.exit_code, counts[0] if counts else 0, suite_skipped(text))
    if idle is not None:
        return nothing_to_do(ctx, SCOPED, idle)
    diagnostics = parse_jest_json(text, ctx.root, runner)
    state: RungState | None = None
    if outcome.exit_code not in (0, 1) or (outcome.exit_code == 1 and counts is None):
        state = "error" if not diagnostics else "red"
    ran = "no report"
    if counts is not None:
        # "N passed", as cargo's and pytest's notes say: a green verdict names what it checked.
        passed = max(counts[0] - counts[1] - suite_skipped(text), 0)
        ran = f"{counts[0]} test(s) ran, {passed} passed"
    notes = [tool.note(), *warm_notes, f"node: {why}; {ran}"]
    result = from_outcome(
        ctx, SCOPED, outcome, tool=runner, state=state, diagnostics=diagnostics, notes=notes
    )
    if result.state == "error" and result.reason is None:
        result.reason = f"{runner} failed to run (exit {outcome.exit_code}): {outcome.tail[-300:]}"
    _reason(result)
    if result.state == "red":
        settle = settle_jest_like(
            ctx, result, project=project, ws=ws, runner=runner, tool=path, report=text, ahead=ahead
        )
        result = await settle
    return result


async def _node_test(
    ctx: RungContext, project: NodeProject, ws: Workspace, files: list[str] | None, why: str
) -> RungResult:
    if files is None:
        tests = await anyio.to_thread.run_sync(test_files, ctx.root, ws.path)
    else:
        chosen = await anyio.to_thread.run_sync(related_tests, ctx.root, ws.path, files)
        tests = list(chosen)
        why = "; ".join([why, *list(chosen.values())[:5]])
    if not tests:
        return nothing_to_do(ctx, SCOPED, "node: no test file imports a touched file")
    junit = ctx.spool(SCOPED, ".xml")
    keys = ctx.spool(SCOPED, ".keys.jsonl")
    argv = [
        "node",
        "--test",
        "--test-reporter=junit",
        f"--test-reporter-destination={junit}",
        f"--test-reporter={KEYS}",
        f"--test-reporter-destination={keys}",
        "--test-reporter=spec",
        "--test-reporter-destination=stdout",
        *(str(ctx.root / t) for t in tests),
    ]
    outcome = await ctx.run(SCOPED, argv, suffix=each(ws.rel), cwd=ws.path, extra_env=_ENV)
    parsed = await anyio.to_thread.run_sync(parse_node_junit, junit, ctx.root)
    skipped_cases = await anyio.to_thread.run_sync(junit_skipped, junit)
    await anyio.Path(junit).unlink(missing_ok=True)
    keyed = await take_report(keys)
    diagnostics, cases = parsed if parsed is not None else ([], 0)
    idle = _all_skipped(outcome.exit_code, cases, skipped_cases)
    if idle is not None:
        return nothing_to_do(ctx, SCOPED, idle)
    state: RungState | None = None
    if outcome.exit_code not in (0, 1) or (outcome.exit_code == 1 and not diagnostics):
        state = "error" if parsed is None else None
    notes = [f"node: node's test runner on {len(tests)} file(s) ({cases} test(s)); {why}"]
    named = name_node_failures(diagnostics, keyed, ctx.root)
    result = from_outcome(
        ctx, SCOPED, outcome, tool="node-test", state=state, diagnostics=diagnostics, notes=notes
    )
    _reason(result)
    if result.state == "red":
        if not named:
            result.notes.append(
                "node: its failures could not each be named by file and full name (the keys "
                "report did not list the junit report's failures): each counts as new"
            )
        result = await settle_node(ctx, result, project=project, ws=ws, keys=keyed)
    return result


async def _scoped_one(
    ctx: RungContext,
    project: NodeProject,
    ws: Workspace,
    touched: list[str],
    chosen: list[tuple[bool, str, str]],
) -> RungResult | None:
    """The workspace's scoped tests; `chosen` gets (whole suite?, its folder, why)."""
    runner = ws.runner()
    folder = ws.rel or "."
    if runner is None:
        if "test" not in ws.scripts:
            return None
        why = (
            f"no vitest, jest or node test runner in {ws.name}, so no affected-test mode: "
            "its whole test script ran"
        )
        chosen.append((True, folder, why))
        return await _test_script(ctx, project, ws, SCOPED, why)
    mine_here = [t for t in touched if ws.contains(t)] or touched
    widen = _widen(ctx, ws, mine_here)
    files: list[str] | None = None if widen else mine_here
    if ctx.selection.filtered:
        files = [t for t in ctx.selection.tests if (ctx.root / t).exists()]
        why = f"the filter: {' '.join(ctx.selection.tests)[:200]}"
    elif widen:
        why = f"whole suite of {ws.name}: {widen}"
    else:
        mode = {"vitest": "vitest related", "jest": "jest --findRelatedTests", "node": "imports"}
        why = f"tests related to {len(mine_here)} touched file(s) by {mode[runner]}"
    chosen.append((files is None, folder, why))
    if runner == "node":
        return await _node_test(ctx, project, ws, files, why)
    return await _jest_like(ctx, project, ws, runner, files, why)


@node_rung(SCOPED, no_work=_no_change)
async def scoped_suite(ctx: RungContext, project: NodeProject) -> RungResult:
    started = time.monotonic()
    said = None if ctx.selection.filtered else await comments_only(ctx, project)
    if said is not None and said[0]:
        return nothing_to_do(ctx, SCOPED, f"node: {said[1]}")
    touched = mine(ctx)
    chosen: list[tuple[bool, str, str]] = []
    results = [
        r
        for ws in project.affected(touched)
        if (r := await _scoped_one(ctx, project, ws, touched, chosen))
    ]
    if chosen and not ctx.selection.filtered:
        # What ran, for the verdict's selection line (the import graph's is Python's).
        whole = any(full for full, _, _ in chosen)
        folders = sorted({folder for full, folder, _ in chosen if not full})
        named = len(chosen) > 1  # one workspace: its folder would only prefix "." to it
        reasons = [f"{folder}: {why}" if named else why for _, folder, why in chosen]
        ctx.selection = Selection(full=whole, tests=[] if whole else folders, reasons=reasons)
    if not results:
        return skipped(
            ctx,
            SCOPED,
            "node: no affected workspace has tests to run (no vitest, jest or node test "
            "runner, no test script); configure [tool.habitat.ladder] test_scoped to run some",
        )
    result = results[0] if len(results) == 1 else merge(results)
    result.duration_s = round(time.monotonic() - started, 3)
    return refused(result, said)


async def _test_script(
    ctx: RungContext, project: NodeProject, ws: Workspace, rung: RungName, why: str
) -> RungResult:
    """The workspace's `test` script through the package manager, in its folder; failures
    read from the console (vitest's and jest's FAIL lines, or TAP's `not ok`)."""
    argv = run_script(project, "test")
    hooks = [h for h in ("pretest", "posttest") if h in ws.scripts]
    if argv is not None and rung == SCOPED and hooks and project.manager == "npm":
        # The tests, not the hooks around them (a repository-wide lint, a network audit such
        # as minimist's `aud --production`): npm still runs the script it is asked for.
        argv = [*argv[:-1], "--ignore-scripts", argv[-1]]
        left_out = [f"node: its {', '.join(hooks)} left out (not tests; test.full runs them)"]
    else:
        left_out = []
    if argv is None:
        return skipped(
            ctx,
            rung,
            f"node: the project uses {project.manager} (by its lockfile), which is not on PATH; "
            f"install it (`corepack enable {project.manager}`)",
            missing=project.manager,
        )
    outcome = await ctx.run(rung, argv, suffix=each(ws.rel), cwd=ws.path, extra_env=_ENV)
    runner = ws.runner() or "test script"
    found = script_failures(outcome.text, ctx.root, runner)
    diagnostics = [diag for diag, _ in found]
    notes = [f"node: {why} ({ws.scripts['test'][:160]}) by {project.manager}", *left_out]
    passed = tap_passed(outcome.text)
    if passed is not None:
        notes.insert(1, f"node: TAP summary: {passed} passed")
        if passed == 0 and outcome.exit_code == 0 and not diagnostics:
            # Green means something was checked: tape's `# pass 0` over skipped tests was not.
            why_not = "node: the test script's TAP summary says 0 passed: nothing was checked"
            return nothing_to_do(ctx, rung, why_not)
    result = from_outcome(
        ctx,
        rung,
        outcome,
        tool=f"{project.manager} test",
        diagnostics=diagnostics,
        notes=notes,
    )
    _reason(result)
    keys = {diag.message: key for diag, key in found if key is not None}
    return await settle_script(ctx, project, ws, argv, outcome, result, keys)


@node_rung(FULL)
async def full_suite(ctx: RungContext, project: NodeProject) -> RungResult:
    root = project.workspaces[0]
    if "test" not in root.scripts:
        return skipped(ctx, FULL, "node: package.json has no test script")
    return await _test_script(ctx, project, root, FULL, "the test script")
