"""The first step of `build.affected` when generated sources are outdated: run each
generator's command, check its outputs are fresh now, and make the rest of the climb look
at them (see verify/generated.py)."""

from __future__ import annotations

import shlex

import anyio.to_thread

from ..config import expand_command
from ..generated import why_outdated
from ..models import RungName, RungResult, Selection
from .context import RungContext, from_outcome

__all__ = ["regenerate"]

RUNG: RungName = "build.affected"


def _rel_matches(ctx: RungContext, patterns: list[str]) -> list[str]:
    found = {p.relative_to(ctx.root).as_posix() for pat in patterns for p in ctx.root.glob(pat)}
    return sorted(found)


async def regenerate(ctx: RungContext, notes: list[str]) -> RungResult | None:
    """Regenerate every outdated generator; a red result when one fails (or leaves its
    outputs outdated), None when all are fresh now (what ran is in `notes`)."""
    made: list[str] = []
    for name in sorted(ctx.outdated):
        generator = ctx.generators[name]
        inputs = await anyio.to_thread.run_sync(_rel_matches, ctx, generator.inputs)
        argv = expand_command(generator.command, files=inputs)
        outcome = await ctx.run(RUNG, argv, suffix=f".generate-{name}.out")
        if outcome.exit_code != 0 or outcome.timed_out or outcome.signal is not None:
            result = from_outcome(ctx, RUNG, outcome, tool=f"generate {name}")
            if result.state == "red":
                result.reason = (
                    f"regenerating {name} failed (exit {outcome.exit_code}): "
                    f"{outcome.tail.strip()[-300:]}"
                )
            return result
        still = await anyio.to_thread.run_sync(why_outdated, ctx.root, generator)
        if still is not None:
            result = from_outcome(ctx, RUNG, outcome, tool=f"generate {name}", state="red")
            result.reason = f"{name}: its command ran (exit 0), but {still}; check its outputs"
            return result
        notes.append(f"regenerated {name} ({ctx.outdated[name]}): {shlex.join(argv)}")
        made += await anyio.to_thread.run_sync(_rel_matches, ctx, generator.outputs)
    # The change is bigger than the snapshot said: the regenerated modules are type-checked
    # and every test runs (what imports generated code is not in the selection).
    ctx.impact.affected_files = sorted(
        set(ctx.impact.affected_files) | {m for m in made if m.endswith((".py", ".pyi"))}
    )
    if not ctx.selection.filtered:
        ctx.selection = Selection(
            full=True, reasons=[f"generated sources regenerated: {', '.join(sorted(ctx.outdated))}"]
        )
    return None
