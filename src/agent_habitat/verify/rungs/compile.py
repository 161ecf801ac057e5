"""`compile.project`: type-check the affected modules — mypy through the warm dmypy daemon
(the project's settings, else mypy's non-strict defaults), or pyright/basedpyright when the
project configures it, or ty or pyrefly (typecheck.py); only errors that are not at HEAD too
make it red. `compileall`
(syntax only, and the rung says so) where no type checker can run."""

from __future__ import annotations

import time
from collections.abc import Set as AbstractSet
from pathlib import Path

import anyio
import anyio.to_thread

from ...workspace import private_dirs
from ..command import Outcome, finish_command
from ..environments import ProjectEnv
from ..hooks import WarmSteps
from ..models import RungName, RungResult, RungState
from ..parsers import parse_compileall, parse_mypy
from . import mypy_early, mypy_stdlib, typecheck
from .checkers import detect_type_checker, mypy_configured
from .context import RungContext, from_outcome, nothing_to_do
from .dmypy import MYPY_FLAGS, DmypyDaemon
from .dmypy_client import run_in_process
from .head_check import settle_on_head, unpack_head
from .mypy_head_cache import seed_cache
from .mypy_plain import (
    cache_dir,
    flags_for,
    package_targets,
    plain_argv,
    prefer_stubs,
    shared_stdlib,
)
from .preamble import python_rung
from .same_types import same_types_as_head

__all__ = ["compile_project", "detect_type_checker", "mypy_flags", "package_targets"]

RUNG: RungName = "compile.project"


def _module_targets(ctx: RungContext) -> list[str]:
    """The touched top-level modules; in a project of top-level modules only (no package),
    all of them once one is touched, as nothing says which of them import which."""
    every = [ctx.layout.rel(p) for p in ctx.layout.modules.values()]
    touched = [rel for rel in every if rel in set(ctx.touched)]
    return every if touched and not ctx.layout.packages else touched


def _summary(result: RungResult) -> None:
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if result.state == "red" and errors:
        first = errors[0]
        where = f"{first.file}:{first.line} {first.code or ''}".rstrip()
        result.reason = f"{len(errors)} {result.tool} error(s), first {where}"


def mypy_flags(ctx: RungContext, env: ProjectEnv, configured: bool) -> list[str]:
    """The flags every mypy run of the rung gets (mypy_plain.flags_for)."""
    return flags_for(ctx.root, ctx.config, env, configured)


async def _mypy(
    ctx: RungContext, env: ProjectEnv, targets: list[str], *, starting: bool = False
) -> RungResult:
    configured = await anyio.to_thread.run_sync(mypy_configured, ctx.root)
    flags = mypy_flags(ctx, env, configured)
    notes: list[str] = []
    if not configured:
        notes.append(
            "the project configures no mypy; checked with mypy's defaults (not strict) "
            "— add [tool.mypy] to pyproject.toml for your own settings"
        )
    outside: set[str] = set()
    tool, note = "mypy", None
    daemon = DmypyDaemon(ctx.workspace)
    if ctx.config.dmypy and starting:
        notes.append(
            "plain mypy over the workspace's incremental cache: the warm-up is still starting "
            "the dmypy daemon (later verifies ask it)"
        )
    elif ctx.config.dmypy and not ctx.keeps_warm and daemon.state() != "alive":
        # This process stops at exit what it starts: a cold daemon (about 4 s on toolz at
        # load 15) would cost more than plain mypy over its incremental cache (under 1 s
        # there once the cache is warm), and would be gone before the next verify.
        notes.append(
            "plain mypy over the workspace's incremental cache: a one-shot verify keeps no "
            "dmypy daemon (a host does)"
        )
    elif ctx.config.dmypy:
        note = daemon.prepare()
        every = await anyio.to_thread.run_sync(package_targets, ctx.root, ctx.layout)
        # The daemon checks the whole package (its list then never changes); only the
        # affected modules' errors are the rung's: type information flows along imports,
        # and the affected set is every module that imports the change, however indirectly.
        outside = set(every) - set(targets)
        whole = [*flags, *sorted(set(every) | set(targets))]
        outcome = await _ask_daemon(ctx, env, daemon, whole, needs_start=note is not None)
        if outcome.exit_code == 2 and outside and "Daemon crashed" not in outcome.text:
            # A blocking error elsewhere in the package (a file mypy cannot parse, a module
            # found twice) stops the whole check: the affected modules alone, as mypy would.
            said = next((ln for ln in outcome.text.splitlines() if ln.strip()), "")[:200]
            notes.append(
                f"the whole package did not type-check ({said}); checked the affected modules alone"
            )
            outcome = await _ask_daemon(ctx, env, daemon, [*flags, *targets], needs_start=False)
            outside = set()
        tool = "dmypy"
        if outcome.exit_code == 2 and "Daemon crashed" in outcome.text:
            note = "dmypy daemon crashed during the check; the next run restarts it"
    shared = _shared_stdlib(ctx, env, flags, configured)
    if tool != "dmypy":
        outcome, outside = await _plain_or_early(ctx, env, flags, targets, shared, notes)
    async with anyio.create_task_group() as tg:
        if tool != "dmypy" and shared is not None and outcome.exit_code in (0, 1):
            # Beside HEAD's check (off the verdict's path): the standard library's entries
            # this run cached, for the user's other workspaces (mypy_stdlib.py).
            tg.start_soon(_publish, _cache_dir(ctx), shared)
        result = await _settled(
            ctx, env, flags, targets, outcome, tool, [*([note] if note else []), *notes], outside
        )
    if tool == "dmypy" and result.state == "red" and result.new_findings:
        return await _confirmed(ctx, env, flags, targets, result, daemon)
    return result


def _cache_dir(ctx: RungContext) -> Path:
    return cache_dir(ctx.workspace.state_dir)


def _plain_mypy(
    ctx: RungContext, env: ProjectEnv, flags: list[str], targets: list[str]
) -> list[str]:
    return plain_argv(ctx.workspace.state_dir, env, flags, targets)


def _shared_stdlib(
    ctx: RungContext, env: ProjectEnv, flags: list[str], configured: bool
) -> Path | None:
    return shared_stdlib(env, flags, configured)


async def _run_plain(
    ctx: RungContext,
    env: ProjectEnv,
    flags: list[str],
    targets: list[str],
    shared: Path | None,
    suffix: str = ".out",
) -> Outcome:
    if shared is not None:
        await anyio.to_thread.run_sync(mypy_stdlib.seed, shared, _cache_dir(ctx))
    return await ctx.run(RUNG, _plain_mypy(ctx, env, flags, targets), suffix=suffix)


async def _plain_or_early(
    ctx: RungContext,
    env: ProjectEnv,
    flags: list[str],
    targets: list[str],
    shared: Path | None,
    notes: list[str],
) -> tuple[Outcome, set[str]]:
    """The plain mypy's outcome, and the modules whose errors are not the rung's. A one-shot
    verify's mypy begun as the process started (mypy_early.py) is taken over when it is the
    same command over the whole package: only the affected modules' errors count then, as
    with the daemon."""
    if not ctx.keeps_warm:
        every = await anyio.to_thread.run_sync(package_targets, ctx.root, ctx.layout)
        whole = _plain_mypy(ctx, env, flags, sorted(set(every) | set(targets)))
        begun = await anyio.to_thread.run_sync(
            mypy_early.take, ctx.workspace, whole, ctx.root, ctx.process_env()
        )
        if begun is not None:
            hooks = ctx.hooks
            if hooks is not None and hooks.process_started is not None:
                hooks.process_started(ctx.task(RUNG), begun.sup.record)
            outcome = await finish_command(
                begun,
                limit_s=ctx.config.timeout_s,
                cap=ctx.config.output_cap_bytes,
                budget=ctx.spool_budget,
            )
            outside = set(every) - set(targets)
            if outcome.exit_code != 2 or not outside:
                notes.append(
                    "begun over the whole package as the verify started (before the "
                    "snapshot and the selection); only the affected modules' errors count"
                )
                return outcome, outside
            # A blocking error elsewhere in the package (a file mypy cannot parse, a module
            # found twice) stopped the whole check: the affected modules alone, as mypy would.
            said = next((ln for ln in outcome.text.splitlines() if ln.strip()), "")[:200]
            notes.append(
                f"the whole package did not type-check ({said}); checked the affected modules alone"
            )
    return await _run_plain(ctx, env, flags, targets, shared), set()


async def _publish(cache: Path, shared: Path) -> None:
    await anyio.to_thread.run_sync(mypy_stdlib.publish, cache, shared)


async def _ask_daemon(
    ctx: RungContext, env: ProjectEnv, daemon: DmypyDaemon, args: list[str], *, needs_start: bool
) -> Outcome:
    argv = daemon.argv(env, args)
    if not needs_start and (env.is_habitat_python or not env.has("mypy")):
        # A live daemon of the habitat's own mypy: ask it from here (dmypy_client.py).
        spool = ctx.spool(RUNG)
        timeout, cap = ctx.config.timeout_s, ctx.config.output_cap_bytes
        outcome = await run_in_process(daemon.status_file, argv, spool, timeout, cap)
        if outcome is not None:
            return outcome
    return await ctx.run(RUNG, argv, reap_leftovers=False)


async def _settled(
    ctx: RungContext,
    env: ProjectEnv,
    flags: list[str],
    targets: list[str],
    outcome: Outcome,
    tool: str,
    notes: list[str],
    outside: AbstractSet[str] = frozenset(),
) -> RungResult:
    parsed = parse_mypy(outcome.text, ctx.root)
    diagnostics = [d for d in parsed if d.file not in outside]
    state: RungState | None = None if outcome.exit_code in (0, 1) else "error"
    errors = [d for d in diagnostics if d.severity == "error"]
    dropped = sum(d.severity == "error" for d in parsed) - len(errors)
    error_lines = sum(": error: " in line for line in outcome.text.splitlines())
    if outcome.exit_code == 1 and not errors:
        # dmypy exits 1 on any output, notes included (e.g. mypy's unused-config note);
        # mypy itself exits 0 there. Errors only in modules the change cannot reach are
        # not the rung's — unless some error line was not understood.
        if ("error" not in outcome.text) or (dropped and error_lines == dropped):
            state = "green"
    result = from_outcome(
        ctx, RUNG, outcome, tool=tool, state=state, diagnostics=diagnostics, notes=notes
    )
    if result.state == "error" and result.reason is None:
        result.reason = f"{tool} failed (exit {outcome.exit_code}): {outcome.tail.strip()[-300:]}"
    _summary(result)
    # HEAD is checked by plain mypy (same flags) in HEAD's export, never by the daemon,
    # which stays warm on the working tree.
    prefix, extra = env.mypy()
    base_argv = [*prefix, *MYPY_FLAGS, *extra, *flags]
    head_cache = private_dirs(ctx.workspace.state_dir / "baseline" / "mypy-cache")
    if errors:  # HEAD may be asked (compare.settle): its first check reuses this tree's cache
        async with anyio.create_task_group() as tg:
            tg.start_soon(unpack_head, ctx)  # beside the copy, not after it
            await anyio.to_thread.run_sync(
                seed_cache, ctx.workspace.state_dir / "mypy-cache", head_cache
            )
    return await settle_on_head(
        ctx,
        RUNG,
        result,
        tool="mypy",
        argv=base_argv,
        targets=targets,
        parse=parse_mypy,
        extra=["--cache-dir", str(head_cache)],
    )


def _new_errors(result: RungResult) -> set[tuple[str | None, int | None, str | None, str]]:
    return {
        (d.file, d.line, d.code, d.message)
        for d in result.diagnostics
        if d.severity == "error" and not d.preexisting
    }


async def _confirmed(
    ctx: RungContext,
    env: ProjectEnv,
    flags: list[str],
    targets: list[str],
    daemon_result: RungResult,
    daemon: DmypyDaemon,
) -> RungResult:
    """A red from the daemon, checked by a plain mypy run (its own incremental cache) before
    it is reported: dmypy's fine-grained state can drift from what mypy says (seen on
    packaging: a `no-redef` the daemon reported and mypy did not). On a difference the
    daemon is restarted and mypy's result stands, saying so."""
    configured = await anyio.to_thread.run_sync(mypy_configured, ctx.root)
    shared = _shared_stdlib(ctx, env, flags, configured)
    outcome = await _run_plain(ctx, env, flags, targets, shared, suffix=".confirm.out")
    plain = await _settled(ctx, env, flags, targets, outcome, "mypy", [])
    if plain.state == "error":
        daemon_result.notes.append(f"not confirmed by plain mypy: {plain.reason}")
        return daemon_result
    if _new_errors(plain) == _new_errors(daemon_result):
        daemon_result.notes.append("confirmed by a plain mypy run")
        return daemon_result
    await daemon.stop(env, ctx.root)
    plain.notes = [
        *daemon_result.notes,
        f"the dmypy daemon diverged from a plain mypy run (daemon: "
        f"{daemon_result.new_findings} new error(s), mypy: {plain.new_findings}); "
        "the daemon was restarted and this is mypy's result",
    ]
    return plain


def _same_types(ctx: RungContext) -> bool:
    """The change is the whole tree's (not `--files`), `ci_parity` is not asked, and no
    checker can tell it from HEAD (same_types.py)."""
    return (
        ctx.policy != "ci_parity"
        and bool(ctx.touched)
        and ctx.touched == ctx.snapshot.touched
        and same_types_as_head(ctx.root, ctx.touched, ctx.snapshot.head)
    )


@python_rung(RUNG)
async def compile_project(ctx: RungContext, env: ProjectEnv) -> RungResult:
    if await anyio.to_thread.run_sync(_same_types, ctx):
        return nothing_to_do(
            ctx,
            RUNG,
            "the change is only comments or blank lines: the same code and checker "
            "directives as HEAD, so no type finding can be new",
        )
    affected = [*ctx.impact.affected_files, *_module_targets(ctx)]
    targets = ctx.existing(sorted(set(affected)))
    if not targets:
        return nothing_to_do(ctx, RUNG, "no package module is affected by the change")
    checker = detect_type_checker(ctx.root, ctx.config, env)
    warm = ctx.hooks.warm if ctx.hooks is not None else None
    if checker == "mypy":
        # Until the warm-up started dmypy (a whole check, on the tree as it was), plain
        # mypy checks the change at once: waiting would cost that start and a recheck,
        # and a start here would be a second one beside the warm-up's.
        starting = warm is not None and not warm.ended("type_daemon")
        return await _mypy(ctx, env, prefer_stubs(ctx.root, targets), starting=starting)
    waited = await _warm_start(warm) if checker != "compileall" else None
    result = await _checked(ctx, env, targets, checker)
    if waited is not None:
        result.notes.append(waited)
    return result


async def _warm_start(warm: WarmSteps | None) -> str | None:
    """Waits for the warm-up's type-checker step while it runs: it starts the language
    server this rung asks (pyright, ty), and a second start beside it would clash. A step
    not begun (it waits for verify to be quiet) and the other steps are not waited for.
    Says how long it waited, if it did."""
    if warm is None or not warm.running("type_daemon"):
        return None
    started = time.monotonic()
    await warm.ready("type_daemon")
    waited = time.monotonic() - started
    if waited < 0.05:
        return None
    return f"waited {waited:.1f} s for the warm-up to start the type checker (on project open)"


async def _checked(
    ctx: RungContext, env: ProjectEnv, targets: list[str], checker: str
) -> RungResult:
    if checker in ("pyright", "basedpyright", "ty", "pyrefly"):
        mine = prefer_stubs(ctx.root, targets)
        every = await anyio.to_thread.run_sync(package_targets, ctx.root, ctx.layout)
        baseline = sorted(set(every) | set(mine))
        if checker == "ty":
            return await typecheck.ty(ctx, env, mine, baseline)
        if checker == "pyrefly":
            return await typecheck.pyrefly(ctx, env, mine, baseline)
        return await typecheck.pyright_family(ctx, env, checker, mine, baseline)
    outcome = await ctx.run(RUNG, [str(env.python), "-m", "compileall", "-q", *targets])
    why = (
        "type_checker = compileall is configured"
        if ctx.config.type_checker == "compileall"
        else "no type checker can run (mypy is not installed here)"
    )
    result = from_outcome(
        ctx,
        RUNG,
        outcome,
        tool="compileall",
        diagnostics=parse_compileall(outcome.text, ctx.root),
        notes=[f"syntax only: {why}; byte-compiled the affected modules, no type check"],
    )
    _summary(result)
    if result.state == "green":
        result.reason = "syntax only: the affected modules byte-compile; types were not checked"
    return result
