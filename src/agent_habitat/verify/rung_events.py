"""A rung's task events on the bus and the runner's hook, as the climb (ladder.py) reports
each rung: `environment.task.started`, then `…completed` (green, skipped), `…failed` (red,
error), `…died` (killed by a signal) or `…cancelled`."""

from __future__ import annotations

from ..events import EventBus
from ..events.kinds import TaskEnd
from .models import RungName, RungResult
from .rungs import RungContext

__all__ = ["announce", "finished"]

_EVENT_OF: dict[str, TaskEnd] = {
    "green": "environment.task.completed",
    "skipped": "environment.task.completed",
    "red": "environment.task.failed",
    "error": "environment.task.failed",
    "died": "environment.task.died",
    "cancelled": "environment.task.cancelled",
}


def announce(bus: EventBus, ctx: RungContext, rung: RungName) -> None:
    bus.publish(
        "environment.task.started",
        task=ctx.task(rung),
        data={
            "rung": rung,
            "ladder": ctx.ladder_id,
            "snapshot": ctx.snapshot.id,
            "spool": str(ctx.spool(rung)),
        },
    )


def finished(bus: EventBus, ctx: RungContext, result: RungResult) -> None:
    """The rung's end: to the runner's hook, then its event."""
    _rung_finished(ctx, result)
    _publish_end(bus, result, ctx)


def _rung_finished(ctx: RungContext, result: RungResult) -> None:
    # runner hook: a cancelled climb returns nothing, so the runner collects results here.
    if ctx.hooks is not None and ctx.hooks.rung_finished is not None:
        ctx.hooks.rung_finished(result)


def _publish_end(bus: EventBus, result: RungResult, ctx: RungContext) -> None:
    bus.publish(
        _EVENT_OF[result.state],
        task=result.task,
        data={
            "rung": result.rung,
            "ladder": ctx.ladder_id,
            "snapshot": ctx.snapshot.id,
            "state": result.state,
            "reason": result.reason,
            "tool": result.tool,
            "command": result.command_line,
            "duration_s": result.duration_s,
            "exit_code": result.exit_code,
            "signal": result.signal,
            "spool": result.spool,
            "diagnostics": len(result.diagnostics),
            "new_findings": result.new_findings,
            "preexisting_findings": result.preexisting_findings,
            "notes": result.notes,
            "provisional": result.provisional,
            "last_lines": result.output.splitlines()[-5:] if result.state == "died" else [],
        },
    )
