"""What a verify chain says on the bus: its start (each climb of it, a restart numbered) and
its end, with the timing that says where the wall a person waited went."""

from __future__ import annotations

import time

from ...events import EventBus
from ...events.kinds import TaskEnd
from ..models import LadderRequest, LadderResult, RungName
from ..snapshot import Snapshot
from ..timing import timing_of
from .chain import Chain

__all__ = ["announce", "conclude"]

_CHAIN_END: dict[str, TaskEnd] = {
    "green": "environment.task.completed",
    "incomplete": "environment.task.completed",
    "nothing_to_verify": "environment.task.completed",
    "cancelled": "environment.task.cancelled",
}


def announce(
    bus: EventBus, chain: Chain, snapshot: Snapshot, request: LadderRequest, rungs: list[RungName]
) -> None:
    """A climb begins: `verify.epoch.started` each time (with `restart: n` after a restart),
    the chain's own `environment.task.started` once."""
    epoch = chain.epoch
    bus.publish(
        "verify.epoch.started",
        task=chain.task,
        data={
            "epoch": epoch.number,
            "snapshot": snapshot.id,
            "head": snapshot.head,
            "policy": request.policy,
            "rungs": rungs,
            "touched": epoch.touched,
            "requests": len(epoch.requests),
            **({"restart": chain.restarts} if chain.restarts else {}),
        },
    )
    if not chain.restarts:
        bus.publish(
            "environment.task.started",
            task=chain.task,
            data={"epoch": epoch.number, "snapshot": snapshot.id, "chain": True},
        )


def conclude(bus: EventBus, chain: Chain, result: LadderResult) -> None:
    """The chain's verdict: timed, kept in its epoch, said on the bus, its waiters woken."""
    if chain.done.is_set():
        return
    epoch = chain.epoch
    now = time.monotonic()
    picked = chain.picked_at if chain.picked_at is not None else now
    result = result.model_copy(
        update={
            "timing": timing_of(
                now - chain.requested_at,
                (r.climb_s for r in result.rungs),
                queue_s=picked - chain.created_at if chain.behind else 0.0,
                coalesce_s=chain.coalesce_s,
                baseline_s=chain.baseline_s,
            )
        }
    )
    epoch.finish(result)
    # A rung that died already said `died`; for the chain it is a failure like red.
    end = _CHAIN_END.get(result.state, "environment.task.failed")
    bus.publish(
        end,
        task=chain.task,
        data={"epoch": epoch.number, "state": result.state, "chain": True},
    )
    bus.publish(
        "verify.epoch.finished",
        task=chain.task,
        data={
            "epoch": epoch.number,
            "state": epoch.state,
            "verified_state": result.state,
            "stale": epoch.stale,
            "changed": sorted(epoch.changed),
            "snapshot": result.snapshot,
            "duration_s": result.duration_s,
            "superseded_by": epoch.superseded_by,
        },
    )
    chain.touch()
    chain.done.set()
