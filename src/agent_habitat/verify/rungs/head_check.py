"""A type checker (or a configured command) run on HEAD's version of the project, for the
baseline of `compile.project` and the configured diagnostic rungs.

The check runs in the export of HEAD (`HeadTree.export`, one per HEAD commit) on the
targets that existed there, with the same argv as the current check. mypy runs plainly
there, not through the warm daemon (which is bound to the working tree), with its
incremental cache in the state folder so later base checks are quick. Base findings are
cached per (HEAD commit, tool configuration, targets).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import anyio.to_thread

from ..baseline import BaseResult, fingerprint
from ..head import HeadTree
from ..models import Diagnostic, RungName, RungResult
from .checker_files import CONFIG_FILES
from .compare import cache_of, head_of, settle
from .context import RungContext

__all__ = ["CONFIG_FILES", "check_on_head", "settle_on_head", "unpack_head"]


Parse = Callable[[str, Path], list[Diagnostic]]


def _prepare(
    ctx: RungContext, head: HeadTree, tool: str, argv: Sequence[str], targets: Sequence[str]
) -> tuple[Path, list[str], str, BaseResult | None]:
    # Blocking (git archive, config files, cache): runs in a worker thread.
    at_head = sorted(head.blobs(targets))
    config = [ctx.root / name for name in CONFIG_FILES]
    key = fingerprint(tool, head.head, *argv, *config, "\0targets", *at_head)
    hit = cache_of(ctx).get(key)
    # Nothing to run (a hit, or targets all new since HEAD): no export needed.
    idle = hit is not None or (bool(targets) and not at_head)
    export = head.export_dir if idle else head.export()
    return export, at_head, key, hit


async def check_on_head(
    ctx: RungContext,
    rung: RungName,
    head: HeadTree,
    *,
    tool: str,
    argv: Sequence[str],
    targets: Sequence[str],
    parse: Parse,
    ok_codes: tuple[int, ...] | None = (0, 1),
    extra: Sequence[str] = (),
) -> tuple[BaseResult, bool] | str:
    """HEAD's findings of `argv + extra + targets` (run in HEAD's export) and whether they
    came from the cache; or why there are none. `targets` that did not exist at HEAD are
    left out (their findings are all new). `ok_codes=None`: any exit code is a result."""
    export, at_head, key, hit = await anyio.to_thread.run_sync(
        _prepare, ctx, head, tool, argv, targets
    )
    if hit is not None:
        return hit, True
    if targets and not at_head:
        return BaseResult(findings=[]), False
    outcome = await ctx.run(rung, [*argv, *extra, *at_head], suffix=".base.out", cwd=export)
    failed = outcome.exit_code is None or outcome.exit_code < 0
    if outcome.timed_out or failed or (ok_codes is not None and outcome.exit_code not in ok_codes):
        return f"{tool} failed on HEAD (exit {outcome.exit_code}): {outcome.tail.strip()[-200:]}"
    result = BaseResult(findings=parse(outcome.text, export), exit_code=outcome.exit_code)
    await anyio.to_thread.run_sync(cache_of(ctx).put, key, result)
    return result, False


async def settle_on_head(
    ctx: RungContext,
    rung: RungName,
    result: RungResult,
    *,
    tool: str,
    argv: Sequence[str],
    targets: Sequence[str],
    parse: Parse,
    ok_codes: tuple[int, ...] | None = (0, 1),
    extra: Sequence[str] = (),
) -> RungResult:
    """`settle` the result against the same check run on HEAD's export."""
    return await settle(
        ctx,
        result,
        lambda head: check_on_head(
            ctx,
            rung,
            head,
            tool=tool,
            argv=argv,
            targets=targets,
            parse=parse,
            ok_codes=ok_codes,
            extra=extra,
        ),
    )


async def unpack_head(ctx: RungContext) -> None:
    """HEAD's export made ahead of the rung that compares with it: in a server beside the
    first rungs (the background recording of HEAD, after the warm-up, unpacks it anyway), and
    beside the copy of the tree's mypy cache once a check has an error to compare; a type
    error or a failed test is then compared with HEAD's without waiting for `git archive`
    (0.3-0.9 s of a first verify at load 25). A one-shot climb makes it only once a rung
    will ask. The ignored files are laid over it by the rung that uses it (most verifies
    use none)."""
    head = head_of(ctx)
    if isinstance(head, str):
        return
    with contextlib.suppress(OSError):  # the rung that needs it says why it could not
        await anyio.to_thread.run_sync(partial(head.export, overlay=False), abandon_on_cancel=True)
