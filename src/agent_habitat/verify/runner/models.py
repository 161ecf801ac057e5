"""What the verify runner answers: the contract of `verify_run` / `verify_status`
(the MCP output schemas are these models)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import Field

from ..field_docs import DocumentedModel
from .accounting import TimeReport
from .epochs import EpochState, VerifyEpoch

__all__ = ["ProgressSink", "VerifyStatus", "VerifyTicket", "summary"]

ProgressSink = Callable[[float, float | None, str], Awaitable[None]]
"""(rungs done, rungs in the plan, message) → None; the adapter throttles."""


class VerifyTicket(DocumentedModel):
    """The answer to a verify request."""

    task: str
    """Task id of the chain that answers it (`verify_status(task)`, `verify_cancel(task)`)."""
    epoch: int
    """The epoch number of that run (monotonic per workspace)."""
    snapshot: str
    """The tree's snapshot when the request was taken; the run verifies the one taken when it
    starts (the same unless files changed within the coalesce window)."""
    state: EpochState
    """The run's state now: `queued` unless waited for."""
    coalesced: bool = False
    """True when merged into a run already queued or running."""
    superseded: str | None = None
    """The running task this request superseded (implicit cancel of the predecessor)."""
    result: VerifyEpoch | None = None
    """The finished epoch, with `wait=True`."""


class VerifyStatus(DocumentedModel):
    """Is the code as it is now green? One call's answer."""

    green: bool
    """True only when the epoch finished green on a snapshot the tree still matches."""
    summary: str
    """One line: e.g. `green on 3f2a…`, `stale: green on 3f2a…, src/a.py changed since`."""
    current_snapshot: str
    """The snapshot id of the tree as it is now."""
    stale: bool
    """True when a file of the epoch's set changed after its snapshot: never green then."""
    changed: list[str] = Field(default_factory=list)
    """The paths that changed since the epoch's snapshot."""
    epoch: VerifyEpoch | None = None
    """The newest epoch (or the one asked for); None before the first verify."""
    running: str | None = None
    """Task id of the chain running now."""
    queued: str | None = None
    """Task id of the chain gathering requests or waiting for its turn."""
    time: TimeReport
    """Time accounting: the workspace's, and the session's when one was named."""


def summary(epoch: VerifyEpoch | None) -> str:
    """One line for a model or a person: the state, where, and what to do about it."""
    if epoch is None:
        return "never verified: run verify"
    where = f"epoch {epoch.epoch} ({epoch.task})"
    if epoch.state in ("queued", "running"):
        extra = f"; already stale: {', '.join(epoch.changed[:5])} changed" if epoch.stale else ""
        return f"{epoch.state}: {where}{extra}"
    on = f" on {epoch.snapshot}" if epoch.snapshot else ""
    if epoch.stale and epoch.state == "stale":
        changed = ", ".join(epoch.changed[:5]) + (" …" if len(epoch.changed) > 5 else "")
        when = "while it ran" if epoch.moved_while_running else "since"
        return f"stale: {epoch.verified_state}{on}, but {changed} changed {when}; verify again"
    line = f"{epoch.state}{on}: {where}"
    failing = next((r for r in epoch.rungs if r.state not in ("green", "skipped")), None)
    if failing is not None and failing.reason:
        line += f"; {failing.rung} {failing.state}: {failing.reason}"
    return line
