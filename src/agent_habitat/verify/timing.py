"""Where the wall a person waited went: from the verify request to the verdict, the rungs'
own time plus the time around them, attributed so that the parts add up to the wall.

A duration that leaves out the wait before the first rung says the ladder is faster than
it is: a person who times `habitat verify` against `pytest` sees the wall, not the rungs.
"""

from __future__ import annotations

from collections.abc import Iterable

from .field_docs import DocumentedModel

__all__ = ["Timing", "timing_of"]


class Timing(DocumentedModel):
    """Seconds from the request to the verdict; `rungs_s` plus the others add up to `wall_s`
    (a part that took no time is absent)."""

    wall_s: float
    """Request to verdict: what the person (or the agent's call) waited."""
    rungs_s: float
    """The rungs' own durations, summed."""
    queue_s: float | None = None
    """Waiting for an earlier run to end (or to be cancelled)."""
    coalesce_s: float | None = None
    """Climbing thrown away when a request joined within the window and the run started
    again with the union of both."""
    baseline_s: float | None = None
    """The warm-up before the climb: the type daemon, HEAD's baselines, the import graph."""
    prepare_s: float | None = None
    """Snapshot, environment probe and test selection, and the runner's own work between the
    rungs and after the last (the check that the tree did not move meanwhile)."""
    start_s: float | None = None
    """A `habitat verify` climbing in its own process: its start before the climb (the
    interpreter, its imports, opening the workspace's state)."""


def _ms(seconds: float | None) -> int:
    return max(0, round((seconds or 0.0) * 1000))


def timing_of(
    wall_s: float,
    rung_durations: Iterable[float | None],
    *,
    queue_s: float = 0.0,
    coalesce_s: float = 0.0,
    baseline_s: float = 0.0,
    start_s: float = 0.0,
) -> Timing:
    """The parts in whole milliseconds, so that they add up exactly; `prepare_s` is the wall
    less everything measured on its own (every moment of it is the runner's own work)."""
    wall, rungs = _ms(wall_s), sum(_ms(d) for d in rung_durations)
    queue, coalesce, baseline, start = _ms(queue_s), _ms(coalesce_s), _ms(baseline_s), _ms(start_s)
    # Never negative: each part is measured inside the wall, up to its own rounding.
    prepare = max(0, wall - rungs - queue - coalesce - baseline - start)

    def part(ms: int) -> float | None:
        return ms / 1000 if ms else None

    return Timing(
        wall_s=wall / 1000,
        rungs_s=rungs / 1000,
        queue_s=part(queue),
        coalesce_s=part(coalesce),
        baseline_s=part(baseline),
        prepare_s=part(prepare),
        start_s=part(start),
    )
