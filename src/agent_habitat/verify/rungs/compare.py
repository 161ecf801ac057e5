"""Red means the change did it: a rung's findings compared with the same tool on HEAD.

A rung calls `settle` with its result and a way to get the base findings; `settle` marks
the pre-existing ones, orders new before old, counts both, and turns a red that only
pre-existing findings caused into green (said in the reason, never hidden).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence

import anyio.to_thread

from ...regular import read_regular
from ..baseline import BaselineCache, BaseResult, mark_preexisting, summarize
from ..head import HeadTree
from ..models import UNCOMPARED, Diagnostic, RungResult, new_warnings
from .context import RungContext

__all__ = [
    "UNCOMPARED",
    "BaseFindings",
    "cache_of",
    "head_of",
    "lines_now",
    "mark_against_head",
    "settle",
]

BaseFindings = Callable[[HeadTree], Awaitable[tuple[BaseResult, bool] | str]]
"""Runs (or reads from the cache) the tool on HEAD: (its result, cached), or why it could
not."""


def head_of(ctx: RungContext) -> HeadTree | str:
    """The snapshot's base, or why there is none (then every finding counts as new)."""
    if ctx.config.lint == "strict":
        return "strict"
    if not ctx.snapshot.in_git:
        return "none: not a git work tree"
    if ctx.snapshot.head is None:
        return "none: no commit yet"
    if ctx.head is None:
        ctx.head = HeadTree(ctx.root, ctx.snapshot.head, ctx.workspace.state_dir)
    return ctx.head


def cache_of(ctx: RungContext) -> BaselineCache:
    return BaselineCache(ctx.workspace.state_dir / "baseline" / "findings")


def lines_now(ctx: RungContext, rel: str) -> list[str] | None:
    try:
        return read_regular(ctx.root / rel, rel).decode("utf-8", "replace").splitlines()
    except OSError:
        return None


def mark_against_head(
    ctx: RungContext,
    head: HeadTree,
    current: list[Diagnostic],
    base: list[Diagnostic],
    code_alone: Callable[[Diagnostic], bool] | None = None,
) -> list[Diagnostic]:
    # Blocking: reads the working files, and HEAD's blobs through git. Only HEAD's findings in
    # a file that has one now can match (every key starts with the file): a baseline made over
    # a whole package must not cost a git read per file of it (~80 ms on packaging).
    files = {d.file for d in current}
    mine = [b for b in base if b.file in files]
    return mark_preexisting(
        current, mine, functools.cache(functools.partial(lines_now, ctx)), head.lines, code_alone
    )


def _first(diagnostics: Sequence[Diagnostic]) -> str:
    first = next(d for d in diagnostics if d.severity == "error" and not d.preexisting)
    return f"{first.file}:{first.line} {first.code or ''}".rstrip()


async def settle(
    ctx: RungContext,
    result: RungResult,
    base_findings: BaseFindings,
    code_alone: Callable[[Diagnostic], bool] | None = None,
) -> RungResult:
    """Compare `result.diagnostics` with HEAD's. A red whose findings are all at HEAD too is
    green — unless HEAD's run passed, so the failure itself is new. `code_alone`: see
    `mark_preexisting`."""
    head_passed = False
    errors = any(d.severity == "error" for d in result.diagnostics)
    if result.state not in ("red", "green") or not errors:
        # Nothing that could decide the rung: no need to pay for HEAD's check. Its warnings
        # are listed unsettled, and say so: qs's `no-continue` at HEAD read as the change's.
        result.new_findings, result.preexisting_findings = summarize(result.diagnostics)
        if any(d.severity == "warning" for d in result.diagnostics):
            result.notes.append(UNCOMPARED)
        return result
    head = head_of(ctx)
    if isinstance(head, str):
        result.baseline = head
    else:
        try:
            base = await base_findings(head)
        except OSError as exc:  # git could not give HEAD's files, or a tool failed to start
            base = str(exc)
        if isinstance(base, str):
            result.baseline = f"none: {base}"
            result.notes.append(f"no baseline, every finding counts as new: {base}")
        else:
            found, cached = base
            result.diagnostics = await anyio.to_thread.run_sync(
                mark_against_head, ctx, head, result.diagnostics, found.findings, code_alone
            )
            if found.exit_code == 0:
                # HEAD passed: a failure now is the change's even if its lines are old.
                head_passed = True
            result.baseline = f"HEAD {head.head[:12]}" + (" (cached)" if cached else "")
    new, old = summarize(result.diagnostics)
    result.new_findings, result.preexisting_findings = new, old
    tool = result.tool or "tool"
    # Compared with HEAD's too, a warning not marked pre-existing is the change's: never red,
    # but never "no new finding" either (fastrand 2.5.0: a new clippy::needless_return beside
    # a pre-existing error read "no new cargo clippy finding").
    warned = new_warnings(result.diagnostics)
    warned = f", {warned}" if warned else ""
    if result.state == "red" and new == 0 and old > 0 and not head_passed:
        result.state = "green"
        none_new = f"no new {tool} error{warned}" if warned else f"no new {tool} finding"
        result.reason = f"{none_new}; {old} pre-existing at HEAD (listed, not red)"
    elif result.state == "red" and new > 0:
        also = f" (+{old} pre-existing)" if old else ""
        result.reason = f"{new} new {tool} finding(s){also}, first {_first(result.diagnostics)}"
    elif result.state == "green" and old:
        none_new = f"no new error{warned}" if warned else "none new"
        result.reason = f"{old} pre-existing {tool} finding(s) at HEAD, {none_new}"
    return result
