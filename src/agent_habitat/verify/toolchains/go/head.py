"""Go's tools run on HEAD's content, for the baseline: in the export of HEAD
(`HeadTree.export`), which has the module's own files and `vendor/` when it is committed;
the module cache and build cache are go's own (`GOMODCACHE`, `GOCACHE`), shared with the
working tree, so nothing is downloaded or rebuilt twice. Results are cached per (HEAD
commit, argv, targets). A red go test's failed tests run there too (`tests_on_head`: the
whole of their packages, so each of their tests' outcomes is kept for the later reds at
that HEAD): rungs/head_tests.py decides which failed already."""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from ...baseline import BaseResult, fingerprint
from ...head import HeadTree
from ...models import Diagnostic, RungName
from ...rungs.compare import cache_of
from ...rungs.context import RungContext
from ...rungs.head_tests import HeadRun
from .parse import parse_test_events

__all__ = ["Step", "covering", "on_head", "test_key", "tests_on_head"]

_RAN: OrderedDict[tuple[str, str, tuple[str, ...]], dict[frozenset[str], str]] = OrderedDict()
"""(root, HEAD commit, a one-step run's argv) → the target sets it ran on HEAD with, each
with its cache key: a later run of the same argv on fewer targets reads the larger run's
findings (`covering`)."""


@dataclass(frozen=True)
class Step:
    """One tool run: `argv + targets` (files or `./dir` patterns; those absent at HEAD are
    left out), its output parsed with paths relative to the folder it ran in."""

    argv: tuple[str, ...]
    targets: tuple[str, ...]
    parse: Callable[[str, Path], list[Diagnostic]]
    ok_codes: tuple[int, ...] = (0, 1)


def _prepare(head: HeadTree, key: str, ctx: RungContext) -> tuple[Path, BaseResult | None]:
    hit = cache_of(ctx).get(key)
    return (head.export_dir if hit is not None else head.export()), hit


def _present(export: Path, targets: Sequence[str]) -> list[str]:
    return [t for t in targets if (export / t).exists()]


async def on_head(
    ctx: RungContext, rung: RungName, head: HeadTree, tool: str, steps: Sequence[Step]
) -> tuple[BaseResult, bool] | str:
    """HEAD's findings of every step together and whether they came from the cache; or why
    there are none. `exit_code` is 0 when HEAD had no finding, 1 when it had some."""
    key = fingerprint(
        "go", tool, head.head, *(part for s in steps for part in (*s.argv, "\0", *s.targets, "\0"))
    )
    export, hit = await anyio.to_thread.run_sync(_prepare, head, key, ctx)
    if hit is not None:
        return hit, True
    if len(steps) == 1:
        wider = await anyio.to_thread.run_sync(covering, ctx, head, steps[0])
        if wider is not None:
            return wider[0], True
    findings: list[Diagnostic] = []
    for step in steps:
        targets = await anyio.to_thread.run_sync(_present, export, step.targets)
        if step.targets and not targets:
            continue  # all of them are new since HEAD: their findings are all new
        outcome = await ctx.run(rung, [*step.argv, *targets], suffix=".base.out", cwd=export)
        found = step.parse(outcome.text, export)
        if (
            outcome.timed_out
            or outcome.exit_code is None
            or (outcome.exit_code not in step.ok_codes and not found)
        ):
            said = outcome.tail.strip()[-200:]
            return f"{step.argv[0]} failed on HEAD (exit {outcome.exit_code}): {said}"
        findings.extend(found)
    result = BaseResult(findings=findings, exit_code=1 if findings else 0)
    await anyio.to_thread.run_sync(cache_of(ctx).put, key, result)
    if len(steps) == 1:
        _remember(ctx, head, steps[0], key)
    return result, False


def _remember(ctx: RungContext, head: HeadTree, step: Step, key: str) -> None:
    slot = (str(ctx.root), head.head, step.argv)
    _RAN.setdefault(slot, {})[frozenset(step.targets)] = key
    _RAN.move_to_end(slot)
    while len(_RAN) > 32:
        _RAN.popitem(last=False)


def covering(ctx: RungContext, head: HeadTree, step: Step) -> tuple[BaseResult, str] | None:
    """HEAD's findings of an earlier run of `step.argv` on every target of `step` and
    maybe more (`./...` covers all), and its targets; None when there was none. A go build
    of more packages reports each failing package's errors as a build of it alone does (a
    package whose dependency fails is not compiled either way), and only HEAD's findings in
    a file with a finding now are compared, so the wider run answers the narrower."""
    wanted = frozenset(step.targets)
    for targets, key in _RAN.get((str(ctx.root), head.head, step.argv), {}).items():
        if (wanted <= targets or "./..." in targets) and (hit := cache_of(ctx).get(key)):
            return hit, " ".join(sorted(targets))
    return None


_TEST = re.compile(r"^(?P<package>\S+?)\.(?P<test>(?:Test|Fuzz|Example)[^\s/]*)(?P<sub>/\S*)?$")


def test_key(diag: Diagnostic) -> str | None:
    """The test a `go test` failure is (`import/path.TestName/sub`); None for a package's
    own failure (a build that failed, a binary that died between tests)."""
    if diag.source != "go test" or diag.code != "FAIL":
        return None
    name = diag.message.split(": ", 1)[0]
    return name if _TEST.match(name) else None


async def tests_on_head(
    ctx: RungContext,
    rung: RungName,
    head: HeadTree,
    argv: Sequence[str],
    keys: Sequence[str],
    dirs: Mapping[str, str],
) -> HeadRun | str:
    """How many tests of each key fail on HEAD: `argv` (go test -json …) of the keys'
    packages that HEAD has, every test of them, so HEAD's outcome of each of their tests is
    known (its failures, its passes at 0) and a later red at this HEAD in those packages
    runs nothing there: on go-version, 9 of 10 mutations are red and each asked HEAD again
    (a link and a run, 0.6-1.2 s), where a package's tests cost about the same as a few."""
    named = [m for k in keys if (m := _TEST.match(k)) is not None]
    export = await anyio.to_thread.run_sync(head.export)
    packages = sorted(
        {
            m["package"]
            for m in named
            if m["package"] in dirs and (export / dirs[m["package"]]).is_dir()
        }
    )
    if not packages:
        return HeadRun()  # every one is new since HEAD
    run = [*argv, *packages]
    outcome = await ctx.run(rung, run, suffix=".head-tests.json", cwd=export)
    if outcome.timed_out or outcome.exit_code not in (0, 1):
        return f"go test failed on HEAD (exit {outcome.exit_code}): {outcome.tail.strip()[-200:]}"
    found = parse_test_events(outcome.text, export, {p: export / dirs[p] for p in packages})
    if outcome.exit_code == 1 and not found.failures:
        return f"go test could not run these tests on HEAD: {outcome.tail.strip()[-200:]}"
    failed = Counter(dict.fromkeys(found.passed_tests, 0))
    failed.update(k for d in found.failures if (k := test_key(d)) is not None)
    return HeadRun(failed=failed)
