"""One rung for every detected toolchain with work, merged into one result.

A toolchain has work when it owns a touched file; a file no detected toolchain owns (a
README, a data file the tests read) goes to each of them, so none misses it. `test.full`
runs for every detected toolchain. A command the project configured for the rung
(`[tool.habitat.ladder]`, `ci_test` under `ci_parity`) wins over every toolchain and runs
once, as `FALLBACK`'s preamble runs it. One toolchain: its result as it made it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..models import RungName, RungResult, RungState, Selection
from ..rungs.context import RungContext, skipped
from .base import Toolchain

__all__ = ["configured", "impact_files", "merge", "narrowed", "run_rung"]

# Worst first: the merged result takes the state of the first one present.
_WORST: tuple[RungState, ...] = ("cancelled", "died", "red", "error", "green", "skipped")


def configured(ctx: RungContext, rung: RungName) -> bool:
    """The project configured this rung's command, which runs instead of any toolchain's."""
    if rung == "test.full" and ctx.policy == "ci_parity" and ctx.config.ci_test is not None:
        return True
    return ctx.config.command_for(rung) is not None


def narrowed(touched: Sequence[str], chain: Toolchain, chains: Sequence[Toolchain]) -> list[str]:
    """The touched files `chain` climbs for: its own, and those no detected toolchain owns."""
    return [p for p in touched if chain.owns(p) or not any(c.owns(p) for c in chains)]


def impact_files(touched: Sequence[str], chains: Sequence[Toolchain]) -> list[str]:
    """The files Python's import-graph impact (`ctx.impact`, `ctx.selection`) looks at: the
    whole change, or with several toolchains detected, Python's share of it, so a `.ts` or
    `.go` file does not widen the Python tests to the whole suite."""
    python = next((c for c in chains if c.name == "python"), None)
    if python is None or len(chains) == 1:
        return list(touched)
    return narrowed(touched, python, chains)


async def run_rung(
    ctx: RungContext, rung: RungName, chains: Sequence[Toolchain], fallback: Toolchain
) -> RungResult:
    if configured(ctx, rung) or not chains:
        return await _one(ctx, rung, fallback)
    if len(chains) == 1:
        return await _one(ctx, rung, chains[0])
    results: list[tuple[str, RungResult]] = []
    for chain in chains:
        mine = narrowed(ctx.touched, chain, chains)
        if ctx.touched and not mine and rung != "test.full":
            continue  # the change gives this toolchain no work
        narrow = {"touched": mine, "spool_tag": f".{chain.name}"}
        results.append((chain.name, await _one(ctx, rung, chain, **narrow)))
    return merge(ctx, rung, results)


async def _one(ctx: RungContext, rung: RungName, chain: Toolchain, **narrow: object) -> RungResult:
    runner = chain.runners.get(rung)
    if runner is None:
        return skipped(ctx, rung, f"the {chain.name} toolchain has no {rung} rung")
    if ctx.toolchain == chain.name and not narrow:
        return await runner(ctx)  # as it is: one toolchain's result unchanged
    sub = dataclasses.replace(ctx, toolchain=chain.name, **narrow)  # type: ignore[arg-type]
    try:
        return await runner(sub)
    finally:
        ctx.head = ctx.head or sub.head  # built once, kept for the rungs after
        if sub.selection is not ctx.selection:  # this toolchain chose its own tests
            ctx.selection = _union(ctx.selection, sub.selection)


def _union(mine: Selection, theirs: Selection) -> Selection:
    return Selection(
        full=mine.full or theirs.full,
        tests=[*mine.tests, *(t for t in theirs.tests if t not in mine.tests)],
        reasons=[*mine.reasons, *theirs.reasons],
        filtered=mine.filtered or theirs.filtered,
    )


def merge(
    ctx: RungContext, rung: RungName, results: Sequence[tuple[str, RungResult]]
) -> RungResult:
    """Several toolchains' results as one: the worst state wins (red, died, error over green
    over skipped), its command and output stand for the rung; diagnostics concatenated,
    notes and reasons prefixed with the toolchain's name, `tool` names each tool."""
    if not results:
        return skipped(ctx, rung, "no toolchain has work in the change")
    rank = {state: index for index, state in enumerate(_WORST)}
    _, worst = min(results, key=lambda item: rank[item[1].state])
    reasons = [f"{n}: {r.reason}" for n, r in results if r.reason]
    missing = [f"{n}: {r.missing}" for n, r in results if r.missing]
    return worst.model_copy(
        update={
            "reason": "; ".join(reasons) or None,
            "tool": ", ".join(f"{n} {r.tool}" for n, r in results if r.tool) or None,
            "duration_s": round(sum(r.duration_s for _, r in results), 3),
            "diagnostics": [d for _, r in results for d in r.diagnostics],
            "notes": [f"{n}: {note}" for n, r in results for note in r.notes],
            "missing": "; ".join(missing) or None,
            "provisional": any(r.provisional for _, r in results),
            "baseline": "; ".join(f"{n}: {r.baseline}" for n, r in results if r.baseline) or None,
        }
    )
