"""Red means the change did it, for tests: a test that fails now and failed on HEAD's content
too is listed as already failing at HEAD, not red.

A toolchain's test rung that comes out red hands its result to `settle_tests` with a way to
name each failure (`key_of`: the test's name, None for what is not one test, such as a
compile error or a binary that died) and a way to run tests on HEAD (`run_on_head`, in
HEAD's export): the named ones, or every test of the command (`HeadRun.whole`), which
answers every later red of that command at no cost. HEAD's outcomes are kept per (HEAD
commit, command) in the workspace state folder, so a later red asks HEAD only about tests
it has no answer for. A failure whose key failed on HEAD as often is pre-existing; any other
is the change's (a test HEAD did not have is new). A red that only pre-existing failures
make is green, saying so (never hidden).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio.to_thread

from ...workspace import write_private
from ..baseline import summarize
from ..head import HeadTree
from ..models import Diagnostic, RungResult
from .compare import head_of
from .context import RungContext

__all__ = [
    "HeadRun",
    "OnHead",
    "known_on_head",
    "not_known",
    "remember_answers",
    "remember_head_run",
    "settle_tests",
]


@dataclass
class HeadRun:
    """What a run on HEAD's content said."""

    failed: Counter[str] = field(default_factory=Counter)
    """Key → how many of its tests failed; a key that ran and passed may be here at 0."""
    whole: bool = False
    """Every test of the command ran (each one it ran is in `failed`): a key it did not run
    is a test HEAD does not have."""


OnHead = Callable[[HeadTree, list[str]], Awaitable[HeadRun | str]]
"""Runs tests on HEAD's content, at least those of these keys; or why it could not."""

_WHOLE = "\0whole"


def _store(ctx: RungContext, key: str) -> Path:
    return ctx.workspace.state_dir / "baseline" / "tests" / key[:2] / f"{key}.json"


def _load(path: Path) -> dict[str, int]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, int)}  # `_WHOLE`: 1


def _save(path: Path, known: dict[str, int]) -> None:
    write_private(path, json.dumps(known, sort_keys=True))


def _mark(diagnostics: Sequence[Diagnostic], keys: list[str | None], failed: dict[str, int]) -> int:
    """Marks failures HEAD had as pre-existing (one for one per key); how many it marked."""
    left = Counter({k: n for k, n in failed.items() if n > 0})
    marked = 0
    for diag, key in zip(diagnostics, keys, strict=True):
        if key is not None and left[key] > 0:
            left[key] -= 1
            diag.preexisting = True
            marked += 1
    return marked


async def known_on_head(ctx: RungContext, cache_key: str) -> frozenset[str] | None:
    """The keys whose outcome on HEAD is kept for the command of `cache_key`; None when
    every test of it is (a whole run's)."""
    known = await anyio.to_thread.run_sync(_load, _store(ctx, cache_key))
    return None if _WHOLE in known else frozenset(known)


async def not_known(ctx: RungContext, cache_key: str, keys: list[str]) -> list[str]:
    """The keys of `keys` HEAD has no answer for in the store (none once a run of HEAD's
    whole command is there)."""
    known = await known_on_head(ctx, cache_key)
    return [] if known is None else [k for k in keys if k not in known]


async def remember_answers(ctx: RungContext, cache_key: str, keys: list[str], ran: HeadRun) -> None:
    """Keeps HEAD's answer about `keys` (asked of HEAD while the tree's run went on) as
    `settle_tests` keeps its own: a key HEAD's run did not fail passed there, or is new."""
    answered = HeadRun(failed=Counter(dict.fromkeys(keys, 0)), whole=ran.whole)
    answered.failed.update({k: n for k, n in ran.failed.items() if k != _WHOLE})
    await remember_head_run(ctx, cache_key, answered)


async def remember_head_run(ctx: RungContext, cache_key: str, ran: HeadRun) -> None:
    """Keeps HEAD's outcomes of a run made ahead of any red (a warm-up's), or of a red run's
    failures asked while it ran, where `settle_tests` looks them up for the same command: a
    later red at that HEAD asks HEAD nothing it answered."""
    path = _store(ctx, cache_key)
    known = await anyio.to_thread.run_sync(_load, path)
    known.update({k: n for k, n in ran.failed.items() if k != _WHOLE})
    if ran.whole:
        known[_WHOLE] = 1
    await anyio.to_thread.run_sync(_save, path, known)


async def settle_tests(
    ctx: RungContext,
    result: RungResult,
    *,
    cache_key: str,
    key_of: Callable[[Diagnostic], str | None],
    run_on_head: OnHead,
    ahead: HeadRun | None = None,
    asked_early: Collection[str] = (),
) -> RungResult:
    """Compare a red test rung's failures with the same tests on HEAD (see the module).
    `ahead`: what a run on HEAD made during this rung's own run said (kept as a run's).
    `asked_early`: the keys HEAD was asked about during the run (head_early.py), whose
    answers are in the store by now: not "cached" in what the result says."""
    if result.state != "red":
        result.new_findings, result.preexisting_findings = summarize(result.diagnostics)
        return result
    keys = [key_of(d) if d.severity == "error" else None for d in result.diagnostics]
    asked = sorted({k for k in keys if k is not None})
    head = head_of(ctx) if asked else "none: no failure names a test"
    if isinstance(head, str):
        result.baseline = head
        result.new_findings, result.preexisting_findings = summarize(result.diagnostics)
        return result
    path = _store(ctx, cache_key)
    known = await anyio.to_thread.run_sync(_load, path)
    cached = ahead is None and (all(k in known for k in asked) or _WHOLE in known)
    cached = cached and not set(asked) & set(asked_early)
    if ahead is not None:
        known.update({k: n for k, n in ahead.failed.items() if k != _WHOLE})
        if ahead.whole:
            known[_WHOLE] = 1
        await anyio.to_thread.run_sync(_save, path, known)
    unknown = [k for k in asked if k not in known]
    if unknown and _WHOLE not in known:
        try:
            ran = await run_on_head(head, unknown)
        except OSError as exc:  # git could not give HEAD's files, or the tool did not start
            ran = str(exc)
        if isinstance(ran, str):
            result.baseline = f"none: {ran}"
            result.notes.append(f"no baseline for the failed tests, each counts as new: {ran}")
            result.new_findings, result.preexisting_findings = summarize(result.diagnostics)
            return result
        known.update({k: ran.failed.get(k, 0) for k in unknown})
        # Every test HEAD's run reported is known from now on (a later red at this HEAD
        # that fails one asks HEAD nothing): its failures, and its passes at 0.
        known.update({k: n for k, n in ran.failed.items() if k != _WHOLE})
        if ran.whole:
            known[_WHOLE] = 1
        await anyio.to_thread.run_sync(_save, path, known)
    old = _mark(result.diagnostics, keys, {k: n for k, n in known.items() if k != _WHOLE})
    result.baseline = f"HEAD {head.head[:12]}" + (" (cached)" if cached else "")
    result.new_findings, result.preexisting_findings = summarize(result.diagnostics)
    new = result.new_findings
    if old and not new:
        result.state = "green"
        result.reason = (
            f"no new test failure; {old} test(s) already failing at HEAD (listed, not red)"
        )
    elif old:
        first = next(d for d in result.diagnostics if d.severity == "error" and not d.preexisting)
        result.reason = (
            f"{new} new failure(s) (+{old} test(s) already failing at HEAD), "
            f"first {first.message.splitlines()[0][:200]}"
        )
    result.diagnostics.sort(key=lambda d: d.preexisting)
    return result
