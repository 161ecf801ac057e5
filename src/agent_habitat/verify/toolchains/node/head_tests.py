"""Red means the change did it, for vitest and jest: a red scoped run's failed tests run
again on HEAD's content (its export, with the working tree's `node_modules` linked in, as
tsc's baseline runs), each failure keyed by its file and full name (`test/a.test.js > adds`),
and rungs/head_tests.py marks those HEAD failed too as already failing, not red. Only the
failed tests' files run on HEAD, by the same runner and the tree's installed version of it;
what HEAD's run reports passing is kept at 0 for the later reds at that HEAD. A failure that
names no test (a file that did not load) is never matched: it counts as the change's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import anyio.to_thread

from ...baseline import fingerprint
from ...command import take_report
from ...head import HeadTree
from ...models import Diagnostic, RungName, RungResult
from ...rungs.context import RungContext
from ...rungs.head_tests import HeadRun, settle_tests
from .common import head_with_modules
from .detect import NodeProject, Workspace
from .parsers import jest_outcomes

__all__ = ["settle_jest_like"]

_ENV = {"FORCE_COLOR": "0"}


def _key_of(failing: Counter[str]) -> Callable[[Diagnostic], str | None]:
    """The key of a failure finding (its message begins `file > full name: `), among the
    keys the run reported failing; None for a file's own failure."""
    keys = sorted(failing, key=len, reverse=True)  # "a > b: c" is not "a > b" of "a > b: c d"

    def key_of(diag: Diagnostic) -> str | None:
        if diag.code != "failed":
            return None
        return next((k for k in keys if diag.message.startswith(f"{k}: ")), None)

    return key_of


async def _on_head(
    ctx: RungContext,
    rung: RungName,
    project: NodeProject,
    ws: Workspace,
    runner: str,
    tool: Path,
    head: HeadTree,
    keys: list[str],
) -> HeadRun | str:
    export = await anyio.to_thread.run_sync(head_with_modules, head, project)
    folder = export / ws.rel if ws.rel else export
    files = sorted({k.split(" > ", 1)[0] for k in keys})
    present = [str(export / f) for f in files if (export / f).is_file()]
    if not present:
        return HeadRun()  # every failed test's file is new since HEAD: each failure is new
    report = ctx.spool(rung, ".head.json")
    if runner == "vitest":
        argv = [str(tool), "run", *present, "--reporter=json", f"--outputFile={report}"]
    else:
        argv = [str(tool), "--runTestsByPath", *present, "--json", f"--outputFile={report}"]
        argv += ["--ci", "--coverage=false"]
    argv.append("--passWithNoTests")
    outcome = await ctx.run(rung, argv, suffix=".head-tests.out", cwd=folder, extra_env=_ENV)
    text = await take_report(report)
    outcomes = jest_outcomes(text, export)
    if outcome.timed_out or outcome.exit_code not in (0, 1) or outcomes is None:
        said = outcome.tail.strip()[-200:]
        return f"{runner} failed on HEAD (exit {outcome.exit_code}): {said}"
    return HeadRun(failed=outcomes)


async def settle_jest_like(
    ctx: RungContext,
    result: RungResult,
    *,
    project: NodeProject,
    ws: Workspace,
    runner: str,
    tool: Path,
    report: str,
) -> RungResult:
    """`result` (a vitest or jest run whose JSON report is `report`) with the failures HEAD
    has too marked as already failing: green when those are all it found (saying so)."""
    failing = jest_outcomes(report, ctx.root) or Counter()
    return await settle_tests(
        ctx,
        result,
        cache_key=fingerprint("node tests on HEAD", ctx.snapshot.head or "", runner, ws.rel),
        key_of=_key_of(+failing),
        run_on_head=lambda head, keys: _on_head(
            ctx, result.rung, project, ws, runner, tool, head, keys
        ),
    )
