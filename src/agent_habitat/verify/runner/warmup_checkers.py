"""The warm-up's type-check step for a project that configures pyright (basedpyright), ty or
pyrefly (warmup.py): the checker found (basedpyright fetched when allowed), HEAD's findings over
the whole package cached where `compile.project` looks, and, for pyright and ty, its language
server started and asked about every package module (rungs/warm_checker.py)."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.to_thread

from .warm_status import WarmItem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..environments import ProjectEnv
    from ..rungs.context import RungContext
    from ..rungs.head_check import Parse
    from ..rungs.warm_checker import ServerSpec
# The rungs' modules load in the function that uses them, as in warmup.py.

__all__ = ["warm_pyrefly", "warm_pyright", "warm_ty"]


async def warm_pyright(ctx: RungContext, env: ProjectEnv, name: str) -> WarmItem:
    from ..rungs import typecheck
    from ..rungs.pyright_tools import PACKAGE, fetch_basedpyright, find_checker

    found = find_checker(env.bin_dir, name)
    if found is None and ctx.config.fetch_checkers:
        failed = await fetch_basedpyright(
            lambda argv: ctx.run("compile.project", argv, suffix=".warm.out")
        )
        if failed:
            return WarmItem("failed", f"fetching {PACKAGE} for {name}: {failed}")
        found = find_checker(env.bin_dir, name)
    if found is None:
        return WarmItem("skipped", f"{name} is configured and not installed")
    at_hand = f"{found.name} at hand ({found.where})"
    base = typecheck.pyright_argv(found, env)
    baseline = await _baseline(ctx, found.name, base, typecheck.pyright_parse(found.name))
    spec = typecheck.server_spec(ctx, env, found.name, Path(found.argv[0]))
    if spec is None:
        detail = f"{at_hand}; no language server beside it, runs cold; {baseline}"
        return WarmItem("warm", detail)
    return await _server(ctx, spec, f"{at_hand}; {baseline}")


async def warm_ty(ctx: RungContext, env: ProjectEnv) -> WarmItem:
    from ..parsers import parse_ty
    from ..rungs import typecheck
    from ..rungs.pyright_tools import locate

    hit = locate(env.bin_dir, "ty")
    if hit is None:
        return WarmItem("skipped", "ty is configured and not installed")
    base = typecheck.ty_argv(hit[0], env)
    baseline = await _baseline(ctx, "ty", base, parse_ty)
    spec = typecheck.server_spec(ctx, env, "ty", hit[0])
    assert spec is not None
    return await _server(ctx, spec, f"ty at hand ({hit[1]}); {baseline}")


async def warm_pyrefly(ctx: RungContext, env: ProjectEnv) -> WarmItem:
    from ..parsers import parse_pyrefly
    from ..rungs import typecheck
    from ..rungs.pyright_tools import locate

    hit = locate(env.bin_dir, "pyrefly")
    if hit is None:
        return WarmItem("skipped", "pyrefly is configured and not installed")
    base = typecheck.pyrefly_argv(hit[0], env)
    baseline = await _baseline(ctx, "pyrefly", base, parse_pyrefly)
    return WarmItem("warm", f"pyrefly at hand ({hit[1]}), runs cold; {baseline}")


async def _baseline(ctx: RungContext, tool: str, argv: list[str], parse: Parse) -> str:
    from ..rungs import typecheck
    from ..rungs.compile import package_targets

    # HEAD's findings over the whole package, cached where the rung looks: the first
    # verify with a finding does not pay a cold run of the checker on HEAD.
    every = await anyio.to_thread.run_sync(package_targets, ctx.root, ctx.layout)
    return await typecheck.warm_baseline(ctx, tool, argv, parse, every)


async def _server(ctx: RungContext, spec: ServerSpec, at_hand: str) -> WarmItem:
    # The server started and asked about every package module, so the first verify finds
    # the program read and bound; what it says of them is not kept.
    from ..rungs import warm_checker
    from ..rungs.compare import head_of
    from ..rungs.compile import package_targets
    from ..rungs.lsp import LspError

    if not ctx.config.warm_checker:
        return WarmItem("skipped", f"{at_hand}; warm_checker = false: the CLI runs cold")
    head = head_of(ctx)
    commit = "" if isinstance(head, str) else head.head
    warm, said = await warm_checker.get(ctx.workspace, ctx.root, spec, commit, may_start=True)
    if warm is None:
        return WarmItem("failed", f"{at_hand}; {said}")
    targets = await anyio.to_thread.run_sync(package_targets, ctx.root, ctx.layout)
    try:
        await anyio.to_thread.run_sync(
            warm.check, targets, list(ctx.touched), ctx.config.timeout_s,
            abandon_on_cancel=True,
        )  # fmt: skip
    except (LspError, OSError) as exc:
        await warm_checker.failed(ctx.workspace)
        return WarmItem("failed", f"{at_hand}; its language server failed: {exc}")
    pid = warm.record.pid if warm.record else None
    detail = f"{at_hand}; language server pid {pid or '?'}, {len(targets)} modules checked"
    return WarmItem("warm", detail, pid=pid)
