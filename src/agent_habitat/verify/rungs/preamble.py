"""The preamble every rung of every toolchain shares, written once (`before_the_tool`;
`python_rung` adds Python's), and the rung that runs a command the project configured
instead of the toolchain's default."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..config import Command, expand_command
from ..environments import ProjectEnv
from ..models import RungName, RungResult
from ..parsers import parse_generic
from .context import RungContext, from_outcome, nothing_to_do, skipped
from .head_check import settle_on_head

__all__ = ["Configured", "before_the_tool", "python_rung", "run_configured"]

NOT_PYTHON = "not a Python project and no [tool.habitat.ladder] command"
# Rungs whose configured command reports findings (compared with HEAD); a configured test
# command's failures are the tests' verdict on the code as it is now.
_DIAGNOSTIC_RUNGS: frozenset[RungName] = frozenset({"diagnose.files", "compile.project"})


async def run_configured(
    ctx: RungContext,
    rung: RungName,
    command: Command,
    *,
    tool: str = "configured",
    notes: list[str] | None = None,
) -> RungResult:
    """A rung whose command the project configured: exit 0 is green, anything else red."""
    tests = ctx.selection.tests if not ctx.selection.full else []
    argv = expand_command(
        command,
        files=ctx.existing(ctx.touched),
        modules=ctx.impact.affected_modules,
        tests=tests,
    )
    outcome = await ctx.run(rung, argv)
    result = from_outcome(
        ctx,
        rung,
        outcome,
        tool=tool,
        diagnostics=parse_generic(outcome.text, ctx.root),
        notes=notes,
    )
    if rung not in _DIAGNOSTIC_RUNGS:
        return result
    return await settle_on_head(
        ctx, rung, result, tool=tool, argv=argv, targets=[], parse=parse_generic, ok_codes=None
    )


@dataclass(frozen=True)
class Configured:
    """The command a rung runs instead of its Python default."""

    command: Command
    tool: str = "configured"
    notes: tuple[str, ...] = ()


Rung = Callable[[RungContext], Awaitable[RungResult]]
PythonRung = Callable[[RungContext, ProjectEnv], Awaitable[RungResult]]


def _from_config(rung: RungName) -> Callable[[RungContext], Configured | None]:
    def configured(ctx: RungContext) -> Configured | None:
        command = ctx.config.command_for(rung)
        return Configured(command) if command is not None else None

    return configured


async def before_the_tool(
    ctx: RungContext,
    rung: RungName,
    no_work: Callable[[RungContext], str | None] | None,
    configured: Callable[[RungContext], Configured | None] | None = None,
) -> RungResult | None:
    """What every toolchain's rung answers before its own tool, or None: nothing to do
    (`no_work` says why), or the command the project configured for it (`configured`,
    default `[tool.habitat.ladder]`'s), run instead."""
    why = no_work(ctx) if no_work is not None else None
    if why is not None:
        return nothing_to_do(ctx, rung, why)
    command = (configured or _from_config(rung))(ctx)
    if command is None:
        return None
    return await run_configured(
        ctx, rung, command.command, tool=command.tool, notes=list(command.notes)
    )


def python_rung(
    rung: RungName,
    *,
    no_work: Callable[[RungContext], str | None] | None = None,
    configured: Callable[[RungContext], Configured | None] | None = None,
) -> Callable[[PythonRung], Rung]:
    """The preamble every rung shares, written once: nothing to do → skipped (`no_work` says
    why); a command is configured → run it; not a Python project → skipped; else the
    Python default, which gets the project's environment."""

    def wrap(body: PythonRung) -> Rung:
        @functools.wraps(body)
        async def run(ctx: RungContext) -> RungResult:
            answered = await before_the_tool(ctx, rung, no_work, configured)
            if answered is not None:
                return answered
            if ctx.env is None:
                return skipped(ctx, rung, NOT_PYTHON)
            return await body(ctx, ctx.env)

        return run

    return wrap
