"""Red means the change did it, for vitest, jest and the node test runner: a red scoped
run's failed tests run again on HEAD's content (its export, with the working tree's
`node_modules` linked in, as tsc's baseline runs), each failure keyed by its file and full
name (`test/a.test.js > adds`), and rungs/head_tests.py marks those HEAD failed too as
already failing, not red. Only the failed tests run on HEAD (their files, narrowed to them
by name: `_only`), by the same runner and the tree's installed version of it; what HEAD's
run reports passing is kept at 0 for the later reds at that HEAD. The warm jest's run tells
its failed tests as each file ends, and HEAD's run of them starts then, beside the rest of
the tree's run (head_ahead.py). A failure that names no test (a file that did not load) is
never matched: it counts as the change's.

The node test runner's junit report names a test by its own name only (no file, no describe
blocks): its runs also write `node_test_keys.cjs`'s report, each test's file and full name
in the order the tests started, which the junit failures take as their keys when both list
the same failed tests in the same order (else no failure is keyed, and each counts as new).
HEAD's run of the failed tests' files writes the same report. A workspace's whole `test`
script (a runner with no affected-test mode, `test.full`) is compared with HEAD by
script_head.py, its failures named from its console."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import anyio.to_thread

from ...baseline import fingerprint
from ...command import Outcome, take_report
from ...head import HeadTree
from ...models import Diagnostic, RungName, RungResult
from ...rungs.context import RungContext
from ...rungs.head_tests import HeadRun, settle_tests
from .common import head_with_modules
from .detect import NodeProject, Workspace
from .head_ahead import Ahead
from .jest_config import cache_args, head_env
from .parsers import jest_outcomes

__all__ = [
    "KEYS",
    "head_key",
    "jest_like_on_head",
    "name_node_failures",
    "node_test_outcomes",
    "settle_jest_like",
    "settle_node",
]

_ENV = {"FORCE_COLOR": "0"}
KEYS = Path(__file__).with_name("node_test_keys.cjs")
"""The node test runner's reporter of each test's file and full name."""
_NODE = "node-test"


def _node_tests(text: str, root: Path) -> list[tuple[str, str | None, bool]] | None:
    """(name, key, failed) of each test `node_test_keys.cjs` reported, describe blocks left
    out; the key is None for a file's own failure (it did not load: no test of it ran).
    None when the text is not such a report."""
    out: list[tuple[str, str | None, bool]] = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            return None
        if not isinstance(item, dict) or item.get("suite"):
            continue
        file, name = str(item.get("file", "")), str(item.get("name", ""))
        own = not file or name == file  # node names a file that did not load by its path
        rel = os.path.relpath(file, root) if file else ""
        key = None if own else f"{rel} > {item.get('key', name)}"
        out.append((name, key, bool(item.get("failed"))))
    return out


def node_test_outcomes(text: str, root: Path) -> Counter[str] | None:
    """Each keyed test of a `node_test_keys.cjs` report with how many times it failed (a test
    that passed is there at 0); None when the text is not such a report."""
    tests = _node_tests(text, root)
    if tests is None:
        return None
    out: Counter[str] = Counter()
    for _, key, failed in tests:
        if key is not None:
            out[key] += failed
    return out


def name_node_failures(diagnostics: list[Diagnostic], text: str, root: Path) -> bool:
    """Each junit failure of a node test run named by its key (`file > full name: message`),
    when the keys report lists the same failed tests in the same order; whether it did."""
    tests = _node_tests(text, root)
    failed = [(name, key) for name, key, bad in tests or [] if bad]
    if tests is None or len(failed) != len(diagnostics):
        return False
    for diag, (name, _) in zip(diagnostics, failed, strict=True):
        if not diag.message.startswith(f"{name}: "):
            return False
    for diag, (name, key) in zip(diagnostics, failed, strict=True):
        if key is not None:
            diag.message = f"{key}: {diag.message[len(name) + 2 :]}"
    return True


def _key_of(
    failing: Counter[str], takes: Callable[[Diagnostic], bool]
) -> Callable[[Diagnostic], str | None]:
    """The key of a failure finding `takes` (its message begins `file > full name: `),
    among the keys the run reported failing; None for any other finding."""
    keys = sorted(failing, key=len, reverse=True)  # "a > b: c" is not "a > b" of "a > b: c d"

    def key_of(diag: Diagnostic) -> str | None:
        if not takes(diag):
            return None
        return next((k for k in keys if diag.message.startswith(f"{k}: ")), None)

    return key_of


def _files(keys: list[str]) -> list[str]:
    return sorted({k.split(" > ", 1)[0] for k in keys})


async def _head_files(
    project: NodeProject, ws: Workspace, head: HeadTree, files: list[str]
) -> tuple[Path, Path, list[str]]:
    """HEAD's export (its modules linked in), the workspace's folder in it, and those of the
    failed tests' `files` that HEAD has."""
    export = await anyio.to_thread.run_sync(head_with_modules, head, project)
    folder = export / ws.rel if ws.rel else export
    return export, folder, [str(export / f) for f in files if (export / f).is_file()]


def _head_run(outcome: Outcome, failed: Counter[str] | None, who: str) -> HeadRun | str:
    if outcome.timed_out or outcome.exit_code not in (0, 1) or failed is None:
        said = outcome.tail.strip()[-200:]
        return f"{who} failed on HEAD (exit {outcome.exit_code}): {said}"
    return HeadRun(failed=failed)


async def jest_like_on_head(
    ctx: RungContext,
    rung: RungName,
    project: NodeProject,
    ws: Workspace,
    runner: str,
    tool: Path,
    head: HeadTree,
    keys: list[str],
) -> HeadRun | str:
    """vitest's or jest's run of the failed tests `keys` name (`file > full name`) on HEAD's
    content: their files, narrowed to those tests by name (`_only`)."""
    export, folder, present = await _head_files(project, ws, head, _files(keys))
    if not present:
        return HeadRun()  # every failed test's file is new since HEAD: each failure is new
    report = ctx.spool(rung, ".head.json")
    env = dict(_ENV)
    if runner == "vitest":
        argv = [str(tool), "run", *present, "--reporter=json", f"--outputFile={report}"]
    else:
        argv = [str(tool), "--runTestsByPath", *present, "--json", f"--outputFile={report}"]
        argv += ["--ci", "--coverage=false"]
        argv += await anyio.to_thread.run_sync(cache_args, ctx, folder)
        env.update(await anyio.to_thread.run_sync(head_env, ctx, project, ws))
    argv.append("--passWithNoTests")
    if (pattern := _only(keys)) is not None:
        argv.append(f"--testNamePattern={pattern}")
    outcome = await ctx.run(rung, argv, suffix=".head-tests.out", cwd=folder, extra_env=env)
    text = await take_report(report)
    return _head_run(outcome, jest_outcomes(text, export, ran_only=True), runner)


_JS_SPECIAL = frozenset("\\^$.*+?()[]{}|/-")
_PATTERN_CAP = 8000
"""Longer than this, HEAD's run is of the failed tests' whole files (a command line's size)."""


def _only(keys: list[str]) -> str | None:
    """A test name pattern (jest's and vitest's `--testNamePattern`, a JavaScript regular
    expression) matching the tests `keys` name by their full names, which both runners match
    it against (describe blocks and title, space-joined, as their JSON reports' `fullName`):
    the other tests of those files are skipped, not run (cron-parser 5.10.0: HEAD's run of two
    failed tests in a 158-test file, 0.73 CPU-s against 3.40 for the whole file). Unanchored at
    the start and case-insensitive in jest, it may run a few more tests: each one that ran is
    known from then on. None when the pattern would be too long for a command line."""
    names = sorted({key.split(" > ", 1)[1] for key in keys if " > " in key})
    if not names:
        return None
    escaped = ["".join(f"\\{c}" if c in _JS_SPECIAL else c for c in name) for name in names]
    pattern = f"(?:{'|'.join(escaped)})$"
    return pattern if len(pattern) <= _PATTERN_CAP else None


async def settle_jest_like(
    ctx: RungContext,
    result: RungResult,
    *,
    project: NodeProject,
    ws: Workspace,
    runner: str,
    tool: Path,
    report: str,
    ahead: Ahead | None = None,
) -> RungResult:
    """`result` (a vitest or jest run whose JSON report is `report`) with the failures HEAD
    has too marked as already failing: green when those are all it found (saying so).
    `ahead`: HEAD's run of failed tests started beside the run (head_ahead.py)."""
    failing = +(jest_outcomes(report, ctx.root) or Counter())
    early = ahead.head_run() if ahead is not None else None
    if ahead is not None and (said := ahead.note()) is not None:
        result.notes.append(said)
    return await settle_tests(
        ctx,
        result,
        cache_key=head_key(ctx, runner, ws),
        key_of=_key_of(failing, lambda diag: diag.code == "failed"),
        run_on_head=lambda head, keys: jest_like_on_head(
            ctx, result.rung, project, ws, runner, tool, head, keys
        ),
        ahead=early,
    )


def head_key(ctx: RungContext, runner: str, ws: Workspace) -> str:
    """The key HEAD's outcomes of the workspace's `runner` are kept by, per HEAD commit."""
    return fingerprint("node tests on HEAD", ctx.snapshot.head or "", runner, ws.rel)


async def _node_on_head(
    ctx: RungContext,
    rung: RungName,
    project: NodeProject,
    ws: Workspace,
    head: HeadTree,
    keys: list[str],
) -> HeadRun | str:
    export, folder, present = await _head_files(project, ws, head, _files(keys))
    if not present:
        return HeadRun()  # every failed test's file is new since HEAD: each failure is new
    report = ctx.spool(rung, ".head.keys.jsonl")
    argv = ["node", "--test", f"--test-reporter={KEYS}", f"--test-reporter-destination={report}"]
    outcome = await ctx.run(
        rung, [*argv, *present], suffix=".head-tests.out", cwd=folder, extra_env=_ENV
    )
    text = await take_report(report)
    return _head_run(outcome, node_test_outcomes(text, export), "the node test runner")


async def settle_node(
    ctx: RungContext, result: RungResult, *, project: NodeProject, ws: Workspace, keys: str
) -> RungResult:
    """`result` (a node test run whose keys report is `keys`, its failures named by
    `name_node_failures`) with the failures HEAD has too marked as already failing."""
    failing = node_test_outcomes(keys, ctx.root) or Counter()
    return await settle_tests(
        ctx,
        result,
        cache_key=fingerprint("node tests on HEAD", ctx.snapshot.head or "", _NODE, ws.rel),
        key_of=_key_of(+failing, lambda diag: diag.source == _NODE),
        run_on_head=lambda head, asked: _node_on_head(ctx, result.rung, project, ws, head, asked),
    )
