"""A Cargo project's warm-up, once its user trusted it (building runs its build scripts and
proc macros: the warm-up waits on trust, as every step does) and no verify runs.

What a red verdict waits for at a HEAD it has not seen is HEAD's: the check of the crate's
own code (`cargo check --lib --bins`, what judges a compile error first: lib_check.py), its
clippy check (what judges the rest), its test build and its failed tests' outcomes there.
All are made here in HEAD's export and target folder, as the rungs make them: a one-crate
project's check and clippy answers go to the findings cache under the very keys the rungs
look up (the check first: 0.3-0.8 s from nothing where clippy takes 1.2-15.8 s), its
test build is the one `test.scoped` would start beside its tests (then skipped), and every
test's outcome on HEAD is kept where `test.scoped`'s red looks (rungs/head_tests.py), so
that red waits for no run on HEAD (strsim's second edit: 1.06 s of HEAD's tests after its
own, at load 15). The tests are the project's code: they run once it is trusted, as every
step does, as Python's background recording runs its suite. The
working tree's clippy check is built in the habitat's own target folder too, so a verify
after a trust given before any verify checks only the edit. A workspace of several crates
gets every crate checked and built (`--workspace`), whose units a later run of some of them
finds fresh. Nothing runs in the project's own `target/`.

It gives way to every verify (`yielding`): each of its cargo runs is cancelled as soon as a
verify is queued (its processes killed; the units it finished stay in their target folder)
and run again once no verify runs. Stopped instead, its cargo would hold the lock on a
target folder the verify's own runs then wait for; left running, it took the cores the
verify needed (unicase's second verdict waited 5 s for the check folder's lock while the
warm-up's clippy held it, at load 24)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

import anyio

from ...models import Diagnostic, RungResult
from ...rungs.compare import head_of
from ...rungs.context import RungContext
from ...rungs.head_tests import HeadRun, remember_head_run
from .cargo import (
    EVERY_UNIT,
    check_env,
    check_target_dir,
    crate_graph,
    on_head,
    packages,
    seed_target,
)
from .head_tests import cache_key, failed_on_head, prebuild_on_head
from .lib_check import head_check
from .tests import TEST_BASE

__all__ = ["GivesWay", "Yielding", "warm_rust"]

_JSON = "--message-format=json"
Item = TypeVar("Item")
Done = TypeVar("Done")


class GivesWay(Protocol):
    """What of runner/give_way.py's `GiveWay` the step uses."""

    async def quiet(self) -> None: ...

    def cancelled_by_verify(self) -> contextlib.AbstractContextManager[anyio.CancelScope]: ...


class Yielding:
    """Runs the step's work so that a verify always goes first (see the module)."""

    def __init__(self, give_way: GivesWay | None) -> None:
        self.give_way = give_way
        self.times = 0
        """How many runs a verify cancelled."""

    async def __call__(self, work: Callable[[], Awaitable[Done]]) -> Done:
        if self.give_way is None:
            return await work()
        while True:
            await self.give_way.quiet()
            with self.give_way.cancelled_by_verify():
                return await work()
            self.times += 1


def _all(_: Diagnostic) -> bool:
    return True


async def warm_rust(
    ctx: RungContext, item: Callable[[str, str], Item], give_way: GivesWay | None = None
) -> Item:
    """The warm-up step's `item(state, detail)` (runner/warmup.py's `WarmItem`); with
    `give_way`, each of its runs gives way to a verify."""
    yielding = Yielding(give_way)
    state, detail = await _warm(ctx, yielding)
    if yielding.times:
        detail += f"; gave way to a verify {yielding.times} time(s) (run again after it)"
    return item(state, detail)


async def _warm(ctx: RungContext, yielding: Yielding) -> tuple[str, str]:
    if shutil.which("cargo", path=ctx.process_env().get("PATH")) is None:
        return "skipped", "cargo is not on PATH"
    graph = await crate_graph(ctx, "diagnose.files")
    if isinstance(graph, RungResult):
        return "failed", graph.reason or "cargo metadata failed"
    crates = sorted(graph.crates)
    scope = packages(crates) if len(crates) == 1 else ["--workspace"]
    verb = "clippy" if shutil.which("cargo-clippy", path=ctx.process_env().get("PATH")) else "check"
    argv = ["cargo", verb, _JSON, *EVERY_UNIT, *scope]
    done = []
    await seed_target(ctx, graph, check_target_dir(ctx))
    mine = await yielding(
        lambda: ctx.run("diagnose.files", argv, suffix=".warm.out", extra_env=check_env(ctx))
    )
    if mine.exit_code in (0, 101):
        done.append(f"the working tree's cargo {verb}")
    head = head_of(ctx)
    if isinstance(head, str):
        return "warm" if done else "failed", ", ".join(done) or f"no HEAD: {head}"
    if len(crates) == 1:
        # What judges a compile error first (lib_check.py): the crate's own code's check.
        said = await yielding(lambda: head_check(ctx, "diagnose.files", crates))
        done += [said] if said is not None else []
    answer = await yielding(
        lambda: on_head(ctx, "diagnose.files", head, argv, tool=f"cargo {verb}", keep=_all, env={})
    )
    if not isinstance(answer, str):
        done.append(f"HEAD's cargo {verb} ({len(answer[0].findings)} findings)")
    run = [*TEST_BASE, *scope]
    await yielding(lambda: prebuild_on_head(ctx, "test.scoped", [run]))
    done.append("HEAD's test build")
    if len(crates) == 1:
        # HEAD's outcome of every test, where a red test.scoped of the crate looks first:
        # its failed tests then run on HEAD only when HEAD had no such test.
        ran = await yielding(lambda: failed_on_head(ctx, "test.scoped", head, run, whole=True))
        if isinstance(ran, HeadRun):
            await remember_head_run(ctx, cache_key(head.head, run, ctx.root), ran)
            done.append(f"HEAD's tests ({len(ran.failed)} outcomes kept)")
    return "warm", "; ".join(done)
