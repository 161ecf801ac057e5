"""Climb the ladder: take the snapshot, work out the impact, run the policy's rungs in
order and stop at the first one that is not green or skipped.

Each rung is a task `<ladder id>.<rung>` with events on the bus:
`environment.task.started`, then `…completed` (green, skipped), `…failed` (red, error),
`…died` (killed by a signal) or `…cancelled`.
"""

from __future__ import annotations

import logging
import secrets
import shutil
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from pathlib import Path

import anyio
import anyio.to_thread

from ..events import EventBus
from ..workspace import Workspace
from . import stopping
from .ahead import Ahead, RedBeside, ahead_of
from .baseline import summarize
from .config import LadderConfig, load_ladder_config, load_policy
from .environments import PROBE_FILE, ProjectEnv, probe_env, resolve_python
from .generated import Generator, load_generators, outdated
from .given_files import given_files
from .hooks import LadderHooks
from .layout import Layout, discover_layout
from .models import (
    POLICIES,
    RUNGS,
    LadderRequest,
    LadderResult,
    LadderState,
    RungName,
    RungResult,
)
from .rung_events import announce, finished
from .rungs import RungContext
from .rungs.context import spool_budget
from .rungs.head_check import unpack_head
from .rungs.warm_pytest import (
    WarmPytest,
    drop_early,
    ensure,
    worth_prestarting,
    worth_warming,
)
from .select.selection import Impact, analyse_impact, explicit_selection
from .stopping import Stopping
from .toolchains import FALLBACK, Toolchain, detected, snapshot_of
from .toolchains.climb import impact_files, run_rung

__all__ = ["new_ladder_id", "run_ladder"]

logger = logging.getLogger(__name__)

_STOPPING = ("red", "error", "died", "cancelled")
# The project interpreter's probe, kept in the workspace's state across processes.
_NEEDS_IMPACT = {"compile.project", "build.affected", "test.scoped"}
_HEAD_ASKERS = {"compile.project", "test.scoped", "test.full"}
"""The rungs that compare what they find with a run in HEAD's export."""


def _selects_tests(rungs: list[RungName], config: LadderConfig) -> bool:
    """Whether a rung of the climb uses the test selection: `test.scoped`, or a configured
    command with a `{tests}` placeholder. Otherwise the impact stops at the affected
    modules (compile.project alone needs no test data, side imports or narrowing)."""
    if "test.scoped" in rungs:
        return True
    return any("{tests}" in str(config.command_for(rung) or "") for rung in rungs)


def _ran_selection(results: list[RungResult], config: LadderConfig) -> bool:
    """Whether a rung that runs the test selection ran (a test rung, or a configured command
    with `{tests}`): a verdict red at diagnose.files, or whose test rung was skipped, ran no
    tests, and a selection line there would say tests were chosen for it."""
    return any(
        r.state != "skipped"
        and (r.rung.startswith("test.") or "{tests}" in str(config.command_for(r.rung) or ""))
        for r in results
    )


def new_ladder_id() -> str:
    return f"v{time.strftime('%H%M%S')}-{secrets.token_hex(3)}"


async def _stop_prestarted(warm: WarmPytest) -> None:
    with anyio.CancelScope(shield=True):
        await warm.stop_now()
        await anyio.to_thread.run_sync(partial(shutil.rmtree, warm.dir, ignore_errors=True))


def _overall(
    results: list[RungResult], ctx: RungContext, chains: list[Toolchain]
) -> tuple[LadderState, str | None]:
    """The ladder's state, and for `incomplete` / `nothing_to_verify` why."""
    states = {r.state for r in results if r.stopped_by is None}
    order: tuple[LadderState, ...] = ("cancelled", "died", "red", "error")
    for state in order:
        if state in states:
            return state, None
    missing = [r for r in results if r.missing]
    if missing:
        what = "; ".join(f"{r.rung}: {r.reason or r.missing}" for r in missing)
        return "incomplete", f"a rung could not run for a missing tool — {what}"
    if "green" in states:
        return "green", None
    # Nothing ran: never green.
    if not chains:
        return "incomplete", (
            "no rung could run: not a Python project and no rung command configured; set "
            'them in pyproject.toml, e.g. [tool.habitat.ladder] "diagnose.files" = '
            '"shellcheck {files}", "test.full" = "make test"'
        )
    if not ctx.touched:
        head = f" {ctx.snapshot.head[:12]}" if ctx.snapshot.head else ""
        return "nothing_to_verify", (
            f"the tree is unchanged since HEAD{head}: nothing to verify "
            "(name files or a filter, or use the ci_parity policy for the full suite)"
        )
    return "nothing_to_verify", (
        f"the change ({', '.join(ctx.touched[:5])}{' …' if len(ctx.touched) > 5 else ''}) "
        "gives no rung work: " + "; ".join(f"{r.rung}: {r.reason}" for r in results)
    )


def _with_regeneration(rungs: list[RungName], stale: dict[str, str]) -> list[RungName]:
    """Outdated generated sources: `build.affected` (which regenerates them) runs right
    after `diagnose.files`, before any rung that would judge code made from stale inputs."""
    if not stale or not set(rungs) - {"diagnose.files"}:
        return rungs
    rest = [r for r in rungs if r not in ("diagnose.files", "build.affected")]
    head: list[RungName] = ["diagnose.files"] if "diagnose.files" in rungs else []
    return [*head, "build.affected", *rest]


def _surroundings(
    root: Path, config: LadderConfig, generators: dict[str, Generator]
) -> tuple[dict[str, str], Layout, list[Toolchain]]:
    """Blocking, each part quick once its files are cached: the generated sources that are
    outdated, the layout and the toolchains, in one worker thread (a hand-off to a thread
    and back costs more on a busy machine than this work: ~15 ms each at load 25)."""
    outdated_now = outdated(root, generators)
    layout = discover_layout(root, config)
    known = {"python": layout.is_python}  # the layout has said whether Python
    return outdated_now, layout, detected(root, known)


async def _context(
    root: Path,
    request: LadderRequest,
    config: LadderConfig,
    workspace: Workspace,
    ladder_id: str,
    rungs: list[RungName],
    found: tuple[Layout, list[Toolchain]],
    hooks: LadderHooks | None = None,
    keeps_warm: bool = True,
) -> tuple[RungContext, list[Toolchain]]:
    policy = request.policy or load_policy(root)
    # runner hook: an epoch verifies the snapshot it was bound to when it began.
    snapshot = hooks.snapshot if hooks and hooks.snapshot else None
    if snapshot is None:
        snapshot = await anyio.to_thread.run_sync(snapshot_of, root)
    touched = given_files(root, request.files) if request.files else snapshot.touched
    layout, chains = found
    python_files = impact_files(touched, chains)
    impact: Impact | None = None
    if not python_files:
        impact = Impact()
    env: ProjectEnv | None = None
    failed: list[Exception] = []  # raised as they are, never as a task group's ExceptionGroup

    async def _impact() -> None:
        nonlocal impact
        try:
            impact = await anyio.to_thread.run_sync(
                partial(
                    analyse_impact,
                    layout,
                    python_files,
                    snapshot.deleted,
                    config,
                    workspace.state_dir / "grimp",
                    hooks.memo if hooks else None,
                    head=snapshot.head,
                    hashes=snapshot.hashes,
                    select_tests=_selects_tests(rungs, config),
                )
            )
        except Exception as exc:
            failed.append(exc)

    async with anyio.create_task_group() as tg:
        if _NEEDS_IMPACT & set(rungs) and python_files:
            # The import graph beside the interpreter's probe (a process: ~0.5 s of a first
            # verify at load 25): neither needs the other.
            tg.start_soon(_impact)
        if layout.is_python:
            python = resolve_python(root, config.python)
            try:
                env = await probe_env(
                    python,
                    workspace.spool_dir / f"probe-{ladder_id}.out",
                    workspace.state_dir / PROBE_FILE,
                )
            except Exception as exc:
                failed.insert(0, exc)
    if failed:
        raise failed[0]
    ctx = RungContext(
        root=root,
        workspace=workspace,
        config=config,
        policy=policy,
        ladder_id=ladder_id,
        snapshot=snapshot,
        touched=touched,
        layout=layout,
        env=env,
        hooks=hooks,
        spool_budget=spool_budget(root),
        toolchain=chains[0].name if len(chains) == 1 else FALLBACK.name,
        rungs=tuple(rungs),
        keeps_warm=keeps_warm,
    )
    if impact is not None:
        ctx.impact = impact
        ctx.selection = impact.selection
    if request.filter:
        ctx.selection = explicit_selection(request.filter)
    return ctx, chains


async def _climb_one(
    ctx: RungContext,
    rung: RungName,
    bus: EventBus,
    chains: list[Toolchain],
    ahead: Ahead | None = None,
    red: RedBeside | None = None,
) -> RungResult:
    task = ctx.task(rung)
    announce(bus, ctx, rung)
    started = time.monotonic()
    red = red or RedBeside({})
    try:
        with red.scope:
            result = await _work(ctx, rung, chains, ahead, started)
        if (by := red.stopped()) is not None:
            result = _stopped(ctx, rung, by, time.monotonic() - started)
    except anyio.get_cancelled_exc_class():
        result = RungResult(
            rung=rung,
            task=task,
            state="cancelled",
            reason="request cancelled",
            duration_s=round(time.monotonic() - started, 3),
        )
        finished(bus, ctx, result)
        raise
    except Exception as exc:  # a rung's bug must end as an `error` result, not kill the climb
        logger.exception("rung %s crashed", rung)
        result = RungResult(rung=rung, task=task, state="error", reason=f"internal error: {exc!r}")
    # The climb's time in the rung, not only its tool's process: a rung that confirms a red
    # with a second run or compares with HEAD spends that too, and a person waits for it.
    if ahead is None and result.stopped_by is None:
        result.duration_s = max(result.duration_s, round(time.monotonic() - started, 3))
    result.new_findings, result.preexisting_findings = summarize(result.diagnostics)
    if rung == "diagnose.files" and result.state == "green" and ctx.outdated:
        result.provisional = True
        why = "; ".join(f"{name}: {why}" for name, why in sorted(ctx.outdated.items()))
        result.reason = (
            f"provisional: generated sources are older than their inputs ({why}); "
            "build.affected regenerates them"
        )
    finished(bus, ctx, result)
    return result


async def _work(
    ctx: RungContext, rung: RungName, chains: list[Toolchain], ahead: Ahead | None, started: float
) -> RungResult:
    if ahead is None:
        return await run_rung(ctx, rung, chains, FALLBACK)
    result = await ahead.result_now()
    waited = time.monotonic() - started
    own = (ahead.ended or time.monotonic()) - ahead.started
    result.notes.append(
        f"started beside {ahead.beside}, {started - ahead.started:.2f} s before "
        f"the climb reached it; ran {own:.2f} s, the climb waited {waited:.2f} s"
    )
    result.duration_s = round(own, 3)
    result.waited(round(waited, 3))
    return result


def _stopped(ctx: RungContext, rung: RungName, by: RungName, seconds: float) -> RungResult:
    return RungResult(
        rung=rung,
        task=ctx.task(rung),
        state="cancelled",
        reason=f"stopped: {by} is red",
        stopped_by=by,
        duration_s=round(seconds, 3),
    )


async def _climb(
    ctx: RungContext, rungs: list[RungName], bus: EventBus, chains: list[Toolchain]
) -> list[RungResult]:
    """The rungs in order, up to the first that stops the climb."""
    results: list[RungResult] = []
    async with anyio.create_task_group() as beside:
        ctx.prestarted_pytest = worth_prestarting(ctx)
        # A server's: the workspace's shared one, kept after the climb (a cancelled start
        # leaves nothing running); a one-shot's: its own, which `run_ladder` stops.
        warm = ctx.prestarted_pytest or worth_warming(ctx)
        if warm is None or ctx.env is None:
            # No test process to come (nothing selected, no pytest, a warm one serving):
            # one begun before the climb knew is stopped now (beside), not after the verdict.
            beside.start_soon(drop_early, ctx.workspace)
        else:
            # The test process's interpreter and pytest's imports, done while the lint and
            # the type check run; the test rung forks it (or waits for its start). A climb
            # that ends first cancels the start.
            beside.start_soon(ensure, warm, ctx.env, ctx.root, ctx.process_env())
        if ctx.hooks is not None and ctx.env is not None and _HEAD_ASKERS & set(rungs):
            beside.start_soon(unpack_head, ctx)
        aheads: dict[RungName, Ahead] = {}
        for index, rung in enumerate(rungs):
            mine = aheads.pop(rung, None)
            for after in ahead_of(ctx, rungs, index, chains):
                if after not in aheads:
                    work = partial(run_rung, ctx, after, chains, FALLBACK)
                    aheads[after] = Ahead.start(beside, after, rung, work)
            red = RedBeside.at(ctx, rung, aheads)
            red.watch(beside)
            result = await _climb_one(ctx, rung, bus, chains, mine, red)
            results.append(result)
            if result.stopped_by is not None:
                if mine is not None:
                    await mine.drop()
                rest = rungs[index + 1 :]
                results.extend(await _end_at(ctx, rest, result.stopped_by, bus, chains, aheads))
                break
            if result.state in _STOPPING:
                if (climb := stopping.current()) is not None:
                    climb.end()
                for dropped in aheads.values():
                    await dropped.drop()
                results.extend(_not_reached(ctx, rungs[index + 1 :], rung, result.state))
                break
        if (climb := stopping.current()) is not None:
            climb.end()
        beside.cancel_scope.cancel()
    return results


def _not_reached(
    ctx: RungContext, rungs: list[RungName], by: RungName, state: str
) -> list[RungResult]:
    return [
        RungResult(
            rung=later,
            task=ctx.task(later),
            state="skipped",
            reason=f"not reached: {by} is {state}",
        )
        for later in rungs
    ]


async def _end_at(
    ctx: RungContext,
    rungs: list[RungName],
    red: RungName,
    bus: EventBus,
    chains: list[Toolchain],
    aheads: dict[RungName, Ahead],
) -> list[RungResult]:
    """The climb ends at `red`, a later rung whose work ended red before the one the climb
    was at: the rungs between it report as they ended, or stopped when still running (their
    processes killed first); `red` reports its findings; the rungs after it are not reached."""
    running = {r for r, a in aheads.items() if r != red and not a.done.is_set()}
    for rung in running:
        await aheads[rung].drop()
    results: list[RungResult] = []
    for index, rung in enumerate(rungs):
        ahead = aheads.pop(rung, None)
        if rung == red:
            results.append(await _climb_one(ctx, rung, bus, chains, ahead))
            results.extend(_not_reached(ctx, rungs[index + 1 :], rung, "red"))
            break
        if ahead is None or rung in running:
            announce(bus, ctx, rung)
            ran = 0.0 if ahead is None else (ahead.ended or time.monotonic()) - ahead.started
            result = _stopped(ctx, rung, red, ran)
            result.waited(0.0)
            finished(bus, ctx, result)
            results.append(result)
        else:
            results.append(await _climb_one(ctx, rung, bus, chains, ahead))
    for ahead in aheads.values():
        await ahead.drop()
    return results


async def run_ladder(
    root: Path,
    request: LadderRequest | None = None,
    *,
    bus: EventBus,
    workspace: Workspace | None = None,
    environ: Mapping[str, str] | None = None,
    hooks: LadderHooks | None = None,
    keeps_warm: bool = True,
    after: list[Callable[[], Awaitable[None]]] | None = None,
) -> LadderResult:
    """Verify the project at `root` as it is now; see `LadderRequest` for the knobs.

    `hooks` is how the verify runner takes part (see `verify.hooks`); others pass none.
    `keeps_warm=False`: this process ends after the verdict (a one-shot CLI verify), so a
    cold daemon would be started only to be stopped (`RungContext.keeps_warm`).
    `after`: where a climb that ended puts the clean-up the verdict need not wait for
    (stopping the warm pytest it started); the caller awaits each once the verdict is out.
    Without it, or when the climb did not end (cancelled), it is done before returning.
    """
    request = request or LadderRequest()
    root = Path(await anyio.Path(root).resolve())
    workspace = (workspace or Workspace.for_project(root)).ensure()
    config = load_ladder_config(root, environ)
    policy = request.policy or load_policy(root, environ)
    rungs = (
        [r for r in RUNGS if r in set(request.rungs)] if request.rungs else list(POLICIES[policy])
    )
    ladder_id = (hooks.ladder_id if hooks else None) or new_ladder_id()
    started = time.monotonic()
    generators = load_generators(root)
    outdated_now, layout, chains = await anyio.to_thread.run_sync(
        _surroundings, root, config, generators
    )
    rungs = _with_regeneration(rungs, outdated_now)
    ctx, chains = await _context(
        root,
        request.model_copy(update={"policy": policy}),
        config,
        workspace,
        ladder_id,
        rungs,
        (layout, chains),
        hooks,
        keeps_warm,
    )
    ctx.generators, ctx.outdated = generators, outdated_now
    results: list[RungResult] = []
    ended = False
    stopped = Stopping()
    try:
        with stopping.stopping(stopped):
            results = await _climb(ctx, rungs, bus, chains)
        ended = True
    finally:
        if ctx.prestarted_pytest is not None:
            stop = partial(_stop_prestarted, ctx.prestarted_pytest)
            if ended and after is not None:
                after.append(stop)
            else:
                with anyio.CancelScope(shield=True):
                    await stop()
        # The stopped rungs' processes, signalled already: reaped after the verdict by the
        # caller that takes them, else now (verify/stopping.py).
        later = after if after is not None else (hooks.after if hooks is not None else None)
        if ended and later is not None and stopped.later:
            later.append(stopped.reap)
        else:
            await stopped.reap()
    state, reason = _overall(results, ctx, chains)

    return LadderResult(
        id=ladder_id,
        snapshot=ctx.snapshot.id,
        head=ctx.snapshot.head,
        policy=policy,
        state=state,
        reason=reason,
        rungs=results,
        touched=ctx.touched,
        selection=ctx.selection if _ran_selection(results, config) else None,
        duration_s=round(time.monotonic() - started, 3),
    )
