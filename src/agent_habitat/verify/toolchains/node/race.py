"""A check the warm-up's start has not finished: the tool's cold run beside it (issue 27).

The warm-up starts the warm eslint and tsc when a project opens, at background priority
(rungs/warm_checker.py). A verify that comes before a start ended does not wait for it: it
runs the tool cold at once, and waits for the start beside it; once the start ended, the
warm checker checks too. The first answer is taken and the other is cancelled (a cold run's
process tree is killed; a warm check's answer is dropped). So the first verify after a
project opens costs what running the tool by hand costs, or less when the warm-up was
nearly done, and never a whole warm-up plus the check (pathe 2.0.3: 33.5 s against 12.4 s
by hand before this). Once the cold run answered, such a verify makes the start the user's
(`warm_checker.hurry`): back at normal priority, so that the next verify finds it warm. Not
before: while the cold run the user waits on works, the start stays background work (on
scule 1.3.0 the hurried starts of the warm eslint and tsc beside their cold runs, and
vitest, were five node processes on two cores: the cold eslint 8-9.5 s against 4 s by hand).

A tool whose start is its first check (tsc: the warm checker's `initialize` checks the whole
program, the work a cold `tsc --noEmit` does) asks `wait_for_start`: the verify hurries the
start at once and waits for it, and runs the tool cold only when the start gave no warm
checker. Raced, the cold run and the start each did the whole check on the same two cores:
ms 3.0.0's first verify after a host start paid a cold tsc of 103 s (load 44-53) beside the
start's own first check, more than its 89 s suite; eslint's start loads its configuration
and plugins and lints nothing, so its cold run on a few files still races it. While a
verify waits so, `ctx.long_waits` says so: a red of the tests started beside the lint ends
the climb then (verify/ahead.py), rather than waiting out a check that cannot make it green.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from ...models import RungName
from ...rungs import warm_checker
from ...rungs.context import RungContext

__all__ = ["warm_or_cold"]

T = TypeVar("T")
Warm = Callable[[list[str], bool], Awaitable[T | None]]
"""The warm checker's answer, None when it cannot give one (and why, in the notes);
its flag says whether it may start a server (and wait for it)."""


async def warm_or_cold(
    ctx: RungContext,
    slot: str,
    tool: str,
    warm: Warm[T],
    cold: Callable[[], Awaitable[T]],
    notes: list[str],
    *,
    may_start: bool = True,
    wait_for_start: bool = False,
    waits: RungName | None = None,
) -> tuple[T, bool]:
    """The answer, and whether the warm checker gave it: the warm one's when it can, else
    the cold run's; while the warm-up's start of `slot`'s server is under way, whichever of
    the two answers first, or, with `wait_for_start`, the start's (hurried at once), the
    cold run only when it gave no warm checker. `waits`: the rung whose work that wait is
    (`ctx.long_waits` says so while it lasts: the climb may end at a red beside it)."""
    starting = warm_checker.announced(ctx.workspace, slot) if ctx.hooks is not None else None
    if starting is None:
        got = await warm(notes, may_start)
        if got is not None:
            return got, True
        return await cold(), False
    if wait_for_start:
        return await _after_start(ctx, slot, tool, starting, warm, cold, notes, waits)
    winner: list[tuple[T, bool, list[str]]] = []

    async def run_cold(scope: anyio.CancelScope) -> None:
        answer = await cold()
        winner.append((answer, False, []))
        scope.cancel()

    async def run_warm(scope: anyio.CancelScope) -> None:
        await starting.wait()
        said: list[str] = []
        got = await warm(said, False)
        if got is not None:
            winner.append((got, True, said))
            scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_cold, tg.cancel_scope)
        tg.start_soon(run_warm, tg.cancel_scope)
    answer, was_warm, said = winner[0]
    notes += said
    # The next verify waits on the warm one: its start is no longer background work.
    hurried = "" if was_warm else warm_checker.hurry(ctx.workspace, slot)
    which = "its warm start answered first" if was_warm else "the cold run answered first"
    notes.append(
        f"{tool}: the warm-up was still starting its warm checker (background priority); "
        f"{tool} ran cold beside it, and {which}"
    )
    if hurried:
        notes.append(
            f"{tool}: its warm checker's start {hurried}, once the cold run answered, "
            "for the next verify"
        )
    return answer, was_warm


async def _after_start(
    ctx: RungContext,
    slot: str,
    tool: str,
    starting: anyio.Event,
    warm: Warm[T],
    cold: Callable[[], Awaitable[T]],
    notes: list[str],
    waits: RungName | None,
) -> tuple[T, bool]:
    """The warm checker's answer once the start (made the user's now) ended; the cold run
    only when there is no warm checker after it."""
    hurried = warm_checker.hurry(ctx.workspace, slot)
    if waits is None:
        await starting.wait()
    else:
        with ctx.long_waits.waiting(waits):
            await starting.wait()
    said: list[str] = []
    got = await warm(said, False)
    how = f" ({hurried})" if hurried else ""
    if got is not None:
        notes += said
        notes.append(
            f"{tool}: the warm-up was starting its warm checker; the verify waited for that "
            f"start{how}, whose first check is the one a cold {tool} would make, rather than "
            f"running {tool} cold beside it"
        )
        return got, True
    notes += said
    notes.append(f"{tool}: the warm-up's start of its warm checker gave none{how}; ran cold")
    return await cold(), False
