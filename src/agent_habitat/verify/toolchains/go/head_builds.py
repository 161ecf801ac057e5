"""A red go test whose packages did not build, compared with HEAD: a build failure HEAD's
content has too (the same errors on the same lines) is listed as pre-existing, not red; a
package that built at HEAD, or an error HEAD's build did not report, stays red.

HEAD's side is the same build: a package's own build (`FailedBuild` `p`) is `go build` of
its folder, as `compile.project` builds it (head.py `on_head`), whose HEAD results serve
here when that rung built the same packages at this HEAD, and the reverse; a test build
(`p [p.test]`: the package with its test files, or its external tests, go test's vet step
included when the run has it) is the run's own go test with `-run=^$`, which builds the
test binaries and runs no test. Compared as `settle` compares any finding
(`mark_against_head`: file, message and the line's text). An error on a line the change
added, whose text HEAD's file does not have, is new whatever HEAD says: then HEAD is not
asked (as for Rust's compile errors), and the other errors are said to be not compared."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio.to_thread

from ...baseline import BaseResult, new_whatever_head_has
from ...head import HeadTree
from ...models import Diagnostic, RungName
from ...rungs.compare import head_of, lines_now, mark_against_head
from ...rungs.context import RungContext
from .head import Step, covering, on_head
from .parse import TestRun, code_names_a_kind, parse_build, parse_test_events
from .project import Package

__all__ = ["BuildsOnHead", "package_of", "settle_builds"]


@dataclass
class BuildsOnHead:
    """What HEAD said of the failed builds."""

    baseline: str | None = None
    """`HEAD <commit>[ (cached)]`, or `none: why` when HEAD could not be asked."""
    notes: list[str] = field(default_factory=list)


def package_of(build: str) -> tuple[str, bool]:
    """The import path a `FailedBuild` is of, and whether it is its tests' build:
    `p` → (p, False); `p [p.test]` and `p_test [p.test]` → (p, True)."""
    name, _, variant = build.partition(" [")
    if not variant:
        return name, False
    return variant.rstrip("]").removesuffix(".test"), True


def _folder(graph: dict[str, Package], name: str) -> str | None:
    package = graph.get(name)
    if package is None:
        return None
    return "./" + package.dir if package.dir != "." else "."


def _test_builds(text: str, at: Path) -> list[Diagnostic]:
    run = parse_test_events(text, at)
    return [d for errors in run.failed_builds.values() for d in errors if d.file]


def _mark_in_place(builds: Sequence[Diagnostic], marked: Sequence[Diagnostic]) -> int:
    """Sets `preexisting` on each of `builds` that `marked` (its marked copies) says is;
    how many."""
    old = [m for m in marked if m.preexisting]
    count = 0
    for diag in builds:
        same = next(
            (
                m
                for m in old
                if (m.file, m.line, m.col, m.message)
                == (diag.file, diag.line, diag.col, diag.message)
            ),
            None,
        )
        if same is not None:
            old.remove(same)
            diag.preexisting = True
            count += 1
    return count


async def settle_builds(
    ctx: RungContext,
    rung: RungName,
    run: TestRun,
    graph: dict[str, Package],
    go: str,
    test_argv: Sequence[str],
) -> BuildsOnHead:
    """Marks the failed builds' errors (`run.failed_builds`, the rung's own diagnostics)
    HEAD's same builds have too."""
    builds = [d for errors in run.failed_builds.values() for d in errors if d.file]
    head = head_of(ctx)
    if not builds:
        return BuildsOnHead()
    if isinstance(head, str):
        return BuildsOnHead(baseline=head)
    plain: set[str] = set()
    tested: set[str] = set()
    unknown: list[str] = []
    for build in run.failed_builds:
        name, tests = package_of(build)
        folder = _folder(graph, name)
        if folder is None:
            unknown.append(build)
        else:
            (tested if tests else plain).add(folder)
    out = BuildsOnHead()
    added = await anyio.to_thread.run_sync(_beyond_head, ctx, head, builds)
    if added:
        # Red whatever HEAD's build says: not waited for (a build of HEAD's packages, from
        # nothing at a new HEAD); the others are listed as they are, not compared.
        others = len(builds) - added
        out.baseline = "none: not asked (a build error on a line the change added is new)"
        out.notes.append(
            f"{added} build error(s) on lines the change added, whose text HEAD's file does "
            "not have: new whatever HEAD's build says, so HEAD was not asked"
            + (f"; the {others} other build error(s) are not compared with HEAD" if others else "")
        )
        return out
    if unknown:
        out.notes.append(
            f"not compared with HEAD (go list does not list them): {', '.join(unknown[:3])}"
        )
    try:
        found = await _on_head(ctx, rung, head, go, test_argv, sorted(plain), sorted(tested), out)
    except OSError as exc:  # git could not give HEAD's files, or go did not start
        found = str(exc)
    if isinstance(found, str):
        out.baseline = f"none: {found}"
        out.notes.append(f"no baseline for the failed builds, each error counts as new: {found}")
        return out
    base, cached = found
    marked = await anyio.to_thread.run_sync(
        mark_against_head, ctx, head, builds, base.findings, code_names_a_kind
    )
    _mark_in_place(builds, marked)
    out.baseline = f"HEAD {head.head[:12]}" + (" (cached)" if cached else "")
    return out


def _beyond_head(ctx: RungContext, head: HeadTree, builds: list[Diagnostic]) -> int:
    """How many of the build errors no finding of HEAD's build could match
    (`baseline.new_whatever_head_has`: on a line the change added to a file it touched,
    whose text HEAD's file does not have). Blocking: reads the files and HEAD's blobs."""
    now = functools.cache(functools.partial(lines_now, ctx))
    return len(new_whatever_head_has(builds, now, head.lines, set(ctx.touched)))


async def _on_head(
    ctx: RungContext,
    rung: RungName,
    head: HeadTree,
    go: str,
    test_argv: Sequence[str],
    plain: list[str],
    tested: list[str],
    out: BuildsOnHead,
) -> tuple[BaseResult, bool] | str:
    findings: list[Diagnostic] = []
    cached = True
    if plain:
        build = Step((go, "build", "-o", os.devnull), tuple(plain), _parse_build)
        wider = await anyio.to_thread.run_sync(covering, ctx, head, build)
        if wider is not None and wider[1] != " ".join(plain):
            out.notes.append(f"HEAD's go build of {wider[1]} answers for {' '.join(plain)}")
        got = await on_head(ctx, rung, head, "go build", (build,))
        if isinstance(got, str):
            return got
        findings += got[0].findings
        cached = cached and got[1]
    if tested:
        argv = (*test_argv, "-run=^$")
        step = Step(argv, tuple(tested), _test_builds)
        got = await on_head(ctx, rung, head, "go test build", (step,))
        if isinstance(got, str):
            return got
        findings += got[0].findings
        cached = cached and got[1]
    return BaseResult(findings=findings, exit_code=1 if findings else 0), cached


def _parse_build(text: str, at: Path) -> list[Diagnostic]:
    return parse_build(text, at)
