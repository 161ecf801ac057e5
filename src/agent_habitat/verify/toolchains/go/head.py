"""Go's tools run on HEAD's content, for the baseline: in the export of HEAD
(`HeadTree.export`), which has the module's own files and `vendor/` when it is committed;
the module cache and build cache are go's own (`GOMODCACHE`, `GOCACHE`), shared with the
working tree, so nothing is downloaded or rebuilt twice. Results are cached per (HEAD
commit, argv, targets)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from ...baseline import BaseResult, fingerprint
from ...head import HeadTree
from ...models import Diagnostic, RungName
from ...rungs.compare import cache_of
from ...rungs.context import RungContext

__all__ = ["Step", "on_head"]


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
    return result, False
