"""The later rungs' work started beside the first ones, before the climb reaches them.

The ladder climbs in order and stops at the first rung that is not green (DESIGN.md). A
first verify after a project opens pays a cold type check (plain mypy while dmypy's start is
under way: 2-15 s on tabulate, isodate and humanize, bench/ladder/ladder_first_verify.py)
and then the whole suite (no test dependency data yet), one after the other: its verdict
came at their sum, where plain pytest takes the suite's wall alone. Here `test.scoped`'s
work starts with the rungs before it and the climb reports it as it always did: its
`environment.task.started` when the climb reaches it, its `duration_s` its own time from
the start of its work (a note says how much of it was before the climb reached it; the
verdict's timing counts only the climb's wait in it, so the rungs still add up to the
wall), and, when an earlier rung stops the climb, `not reached` like any rung after a red
one, its processes killed and what it recorded discarded (the rung's own cancel path).

In all three toolchains `compile.project` and `test.scoped` start beside `diagnose.files`:
the linters, the type checkers and the test runners read the tree and write only their own
reports (on scule 1.3.0 the first verify after a host start was their sum, eslint 26 s +
tsc 22 s + vitest 10 s at load 26, where `npx vitest run` took 12 s; a Python project's
ruff is quick, but HEAD's lint of the touched files comes with it, 0.2-0.5 s at load 15-25
that the cold mypy and the suite then waited for; a Go project's gofmt and go vet read the
tree, go build and go test write only to go's build cache: go-version's verdict was vet,
then the tests, where `go test ./...` overlaps its vet step with its compile).
The climb may end at the first red of any rung under way. While the rung they started beside
runs, a rung whose work ends red ends the climb there (`RedBeside`): the verdict is red at
that rung with its findings, the rung the climb was at and those between that are still
running are cancelled and reported `stopped: <rung> is red` (`RungResult.stopped_by`,
never green, never the verdict's state), those after it `not reached`. A Go compile error
that go test's compiler reports in 0.2-0.3 s waited 0.8-1.2 s for go vet's own type check
to say the same (uuid v1.6.0, issue 27). A red earlier rung still stops the later ones.
Never a rung the project configures (a configured command may write what the other reads),
never across `build.affected`: when a policy runs it, it regenerates sources the tests
read, so nothing overlaps it; and only for a project of one toolchain.

While a Node project's `compile.project` waits on the warm tsc's start, whose first answer
is a check of the whole program (`RungContext.long_waits`, toolchains/node/race.py), the
climb at it ends at a red `test.scoped` too (`_WHILE_WAITING`): ms 3.0.0's first verify after
a host start waited 121 s for that check (load 27-50), its related tests red at 110 s,
against a 107 s suite. Only then: at any other time the type check's answer is
its own, which a red of the tests started beside it does not preempt (a type error whose
tests fail too is red at `compile.project`, as before: no race between the two answers
decides which rung a verdict names, but a start's wait, which the climb knows).

A Rust project's `test.scoped` starts beside `diagnose.files` too, passing over
`compile.project`, which starts nothing: clippy's check of the crates the change reaches
answers it (toolchains/rust/rungs.py), in the habitat's own target folder, while the tests
build in the project's `target/` (one folder would give one of them cargo's lock and make
the other wait: the climb was clippy's check, then the test build, where `cargo test` is
the test build alone).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import anyio
import anyio.abc
import anyio.lowlevel

from . import stopping
from .models import RungName, RungResult, RungState
from .rungs.context import RungContext
from .toolchains import Toolchain
from .toolchains.climb import configured

__all__ = ["Ahead", "RedBeside", "ahead_of"]

_BESIDE: dict[str, dict[RungName, tuple[RungName, ...]]] = {
    "python": {"diagnose.files": ("compile.project", "test.scoped")},
    "node": {"diagnose.files": ("compile.project", "test.scoped")},
    "go": {"diagnose.files": ("compile.project", "test.scoped")},
    "rust": {"diagnose.files": ("test.scoped",)},
}
"""Per toolchain: a rung, and the rungs whose work may start beside it."""

_WHILE_WAITING: dict[str, dict[RungName, tuple[RungName, ...]]] = {
    "node": {"compile.project": ("test.scoped",)},
}
"""Per toolchain: a rung, and the rungs (started beside an earlier one) whose red ends the
climb at it while its work waits on a warm checker's start (`RungContext.long_waits`)."""

_PASSED_OVER: dict[str, frozenset[RungName]] = {"rust": frozenset({"compile.project"})}
"""Per toolchain: rungs between those that start nothing of their own, so the rungs after
them may still start beside (Rust's `compile.project` is the clippy run's answer)."""


def ahead_of(
    ctx: RungContext, rungs: Sequence[RungName], index: int, chains: Sequence[Toolchain]
) -> list[RungName]:
    """The rungs whose work starts beside `rungs[index]`: those right after it that its
    toolchain lets start beside it (over those it passes over), up to the first that may
    not (none if it is configured)."""
    if len({chain.name for chain in chains}) != 1:
        return []
    rung = rungs[index]
    may = _BESIDE.get(chains[0].name, {}).get(rung, ())
    if not may or configured(ctx, rung):
        return []
    passed = _PASSED_OVER.get(chains[0].name, frozenset())
    after: list[RungName] = []
    for later in rungs[index + 1 :]:
        if configured(ctx, later):
            break
        if later in may:
            after.append(later)
        elif later not in passed:
            break
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
    ended: float | None = None

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
                ahead.ended = time.monotonic()
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


_ENDS_THE_CLIMB: tuple[RungState, ...] = ("red",)


def _red(ahead: Ahead) -> bool:
    return (
        ahead.done.is_set() and ahead.result is not None and ahead.result.state in _ENDS_THE_CLIMB
    )


@dataclass
class RedBeside:
    """The rungs whose work started beside the one the climb is at, watched while it runs:
    the first of them (in the ladder's order, among those done) to end red cancels `scope`,
    which the climb's rung runs in. `waited`: rungs started earlier whose red does so only
    while the climb's rung waits on a warm checker's start (`_WHILE_WAITING`)."""

    aheads: dict[RungName, Ahead]
    """In the ladder's order."""
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    by: RungName | None = None
    closed: bool = False
    waited: dict[RungName, Ahead] = field(default_factory=dict)
    ctx: RungContext | None = None
    rung: RungName | None = None

    @classmethod
    def at(cls, ctx: RungContext, rung: RungName, aheads: dict[RungName, Ahead]) -> RedBeside:
        """What may end the climb while it is at `rung`, of the work under way (`aheads`)."""
        beside = {r: a for r, a in aheads.items() if a.beside == rung}
        later = _WHILE_WAITING.get(ctx.toolchain, {}).get(rung, ())
        waited = {r: a for r, a in aheads.items() if r in later and r not in beside}
        return cls(beside, waited=waited, ctx=ctx, rung=rung)

    def watch(self, tg: anyio.abc.TaskGroup) -> None:
        for ahead in self.aheads.values():
            tg.start_soon(self._wait, ahead)
        for ahead in self.waited.values():
            tg.start_soon(self._wait_while_waiting, ahead)

    async def _wait(self, ahead: Ahead) -> None:
        await ahead.done.wait()
        if self.closed or self.by is not None or not _red(ahead):
            return
        self._end(next(rung for rung, other in self.aheads.items() if _red(other)))

    async def _wait_while_waiting(self, ahead: Ahead) -> None:
        await ahead.done.wait()
        if not _red(ahead) or self.ctx is None or self.rung is None:
            return
        await self.ctx.long_waits.until(self.rung)
        if not self.closed and self.by is None:
            self._end(ahead.rung)

    def _end(self, by: RungName) -> None:
        self.by = by
        if (climb := stopping.current()) is not None:
            climb.end()  # what it stops is reaped after the verdict (verify/stopping.py)
        self.scope.cancel()

    def stopped(self) -> RungName | None:
        """The rung whose red stopped the climb's rung, once that rung's work is over (None
        when it ended by itself); later reds stop nothing."""
        self.closed = True
        return self.by if self.scope.cancelled_caught else None
