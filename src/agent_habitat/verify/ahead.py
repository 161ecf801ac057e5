"""The test rung's work started beside the type check, before the climb reaches it.

The ladder climbs in order and stops at the first rung that is not green (DESIGN.md). A
first verify after a project opens pays a cold type check (plain mypy while dmypy's start is
under way: 2-15 s on tabulate, isodate and humanize, bench/ladder/ladder_first_verify.py)
and then the whole suite (no test dependency data yet), one after the other: its verdict
came at their sum, where plain pytest takes the suite's wall alone. Here `test.scoped`'s
work starts with `compile.project` and the climb reports it as it always did: its
`environment.task.started` when the climb reaches it, its `duration_s` the climb's wait in
it (so the rungs still add up to the wall; a note says how long it had run before), and,
when the type check stops the climb, `not reached` like any rung after a red one, its
processes killed and what it recorded discarded (the rung's own cancel path).

Only Python's rungs, neither configured by the project (a configured command may write
what the other reads), and only `compile.project` then `test.scoped`: `build.affected`,
when a policy runs it, regenerates sources the tests read, so nothing overlaps it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import anyio
import anyio.abc
import anyio.lowlevel

from .models import RungName, RungResult
from .rungs.context import RungContext
from .toolchains import Toolchain
from .toolchains.climb import configured

__all__ = ["Ahead", "ahead_of"]

_PAIRS: dict[RungName, RungName] = {"compile.project": "test.scoped"}
"""A rung, and the rung whose work starts beside it."""


def ahead_of(
    ctx: RungContext, rungs: Sequence[RungName], index: int, chains: Sequence[Toolchain]
) -> RungName | None:
    """The rung whose work starts beside `rungs[index]`, or None."""
    rung = rungs[index]
    after = rungs[index + 1] if index + 1 < len(rungs) else None
    if after is None or _PAIRS.get(rung) != after:
        return None
    if any(chain.name != "python" for chain in chains):
        return None
    if configured(ctx, rung) or configured(ctx, after):
        return None
    return after


@dataclass
class Ahead:
    """One rung's work under way before the climb reaches it."""

    rung: RungName
    beside: RungName
    """The rung it started beside."""
    started: float = field(default_factory=time.monotonic)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)
    result: RungResult | None = None
    error: Exception | None = None

    @classmethod
    def start(
        cls,
        tg: anyio.abc.TaskGroup,
        rung: RungName,
        beside: RungName,
        work: Callable[[], Awaitable[RungResult]],
    ) -> Ahead:
        ahead = cls(rung, beside)

        async def run() -> None:
            try:
                with ahead.scope:
                    ahead.result = await work()
            except Exception as exc:  # given to the climb, which reports it as the rung's
                ahead.error = exc
            finally:
                ahead.done.set()

        tg.start_soon(run)
        return ahead

    async def result_now(self) -> RungResult:
        """Its result, once its work ends (the climb reached the rung)."""
        await self.done.wait()
        if self.error is not None:
            raise self.error
        if self.result is None:
            await anyio.lowlevel.checkpoint()  # the climb is being cancelled: raises here
            raise RuntimeError(f"{self.rung}'s work started ahead ended without a result")
        return self.result

    async def drop(self) -> None:
        """The climb stopped before the rung: its work is cancelled (its processes killed)
        and over before the climb reports."""
        self.scope.cancel()
        with anyio.CancelScope(shield=True):
            await self.done.wait()
