"""Time accounting per agent session and per workspace (DESIGN §5, seed 002 "Metrics").

* wall — since the session's first call (the workspace's: since the runner opened);
* environment — the union of the time any environment task ran (rungs, verify chains);
* blocked — the time a foreground call waited on the environment;
* active — wall minus the idle gaps (no call and no environment work) longer than the
  threshold: a person at the coffee machine is not the tooling's fault;
* reasoning — active minus blocked.

Adapters call `call_started` / `call_ended` (or `call(...)`) around every tool call; the
environment's time comes from the `environment.task.*` events on the bus.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ...events import Event
from ..field_docs import DocumentedModel

__all__ = ["WORKSPACE", "TimeAccount", "TimeAccounting", "TimeReport"]

WORKSPACE = "*workspace*"
"""The pseudo-session every call also counts for."""
_ENDS = ("completed", "failed", "cancelled", "died")

Interval = tuple[float, float]


class TimeAccount(DocumentedModel):
    """Seconds, rounded to milliseconds; active = reasoning + blocked, active ≤ wall."""

    wall_s: float
    """Since the first call (the workspace: since the runner opened)."""
    active_s: float
    """wall minus the idle gaps."""
    environment_s: float
    """Union of the time any environment task ran (within this account's wall time)."""
    blocked_s: float
    """Time a foreground call waited on the environment."""
    reasoning_s: float
    """active − blocked: the agent (or person) thinking, not waiting."""
    idle_s: float
    """wall − active: gaps with nothing going on longer than the idle threshold."""
    calls: int
    """Tool calls counted."""


class TimeReport(DocumentedModel):
    """The workspace's account and, when asked for one, a session's."""

    idle_threshold_s: float
    """A gap with nothing going on longer than this is idle."""
    workspace: TimeAccount
    """Every session's calls together."""
    session: TimeAccount | None = None
    """The session asked for; None when it made no call yet."""
    session_id: str | None = None
    """Its id, as the adapter named it."""


def _union(intervals: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _joined(intervals: list[Interval], latest: Interval) -> list[Interval]:
    """`_union` of `intervals` (already a union) and `latest`, which ends no earlier than any
    of them (it ended now): only the tail it overlaps is merged, not the whole list sorted."""
    start, end = latest
    keep = len(intervals)
    while keep and intervals[keep - 1][1] >= start:
        keep -= 1
    if keep < len(intervals):
        start = min(start, intervals[keep][0])
        end = max(end, intervals[-1][1])
    return [*intervals[:keep], (start, end)]


def _compact(intervals: list[Interval], threshold: float) -> list[Interval]:
    """`intervals` (a union, sorted) with its newest joined to the one before while they are
    at most `threshold` apart: only gaps longer than it are idle, and a gap no longer
    cannot hold one, so the idle time is the same, from a list that stays short."""
    while len(intervals) > 1 and intervals[-1][0] - intervals[-2][1] <= threshold:
        intervals = [*intervals[:-2], (intervals[-2][0], max(intervals[-2][1], intervals[-1][1]))]
    return intervals


def _length(intervals: list[Interval]) -> float:
    return sum(end - start for start, end in intervals)


def _clip(intervals: list[Interval], lo: float, hi: float) -> list[Interval]:
    return [(max(s, lo), min(e, hi)) for s, e in intervals if e > lo and s < hi]


@dataclass
class _Session:
    started: float
    calls: dict[int, float] = field(default_factory=dict)
    """Open calls: id → start."""
    done: list[Interval] = field(default_factory=list)
    """Ended calls, joined where less than the idle threshold apart (`_compact`)."""
    blocked: list[Interval] = field(default_factory=list)
    """Blocked calls that an open call may still overlap; the others are in `blocked_s`."""
    blocked_s: float = 0.0
    count: int = 0


class TimeAccounting:
    """Collects call and environment intervals; `report()` adds them up."""

    def __init__(
        self, idle_threshold_s: float = 300.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.idle_threshold_s = idle_threshold_s
        self.clock = clock
        self._sessions: dict[str, _Session] = {WORKSPACE: _Session(started=clock())}
        self._env_open: dict[str, float] = {}
        self._env_done: list[Interval] = []
        self._ids = itertools.count(1)

    def call_started(self, session: str) -> int:
        """A tool call of `session` began; returns its id for `call_ended`."""
        now = self.clock()
        call = next(self._ids)
        for name in (session, WORKSPACE):
            entry = self._sessions.setdefault(name, _Session(started=now))
            entry.calls[call] = now
            entry.count += 1
        return call

    def call_ended(self, session: str, call: int, *, blocked: bool) -> None:
        """The call ended; `blocked`: it waited on the environment (a foreground run)."""
        now = self.clock()
        for name in (session, WORKSPACE):
            entry = self._sessions.get(name)
            if entry is None or call not in entry.calls:
                continue
            interval = (entry.calls.pop(call), now)
            entry.done = _compact(_joined(entry.done, interval), self.idle_threshold_s)
            if blocked:
                entry.blocked = _joined(entry.blocked, interval)
            # A call ends now and starts no earlier than the oldest open one: what ended
            # before that is never joined again, so it is only a length (each call's
            # accounting stays as short as the session's first one).
            settled_before = min(entry.calls.values(), default=now)
            settled = [iv for iv in entry.blocked if iv[1] < settled_before]
            if settled:
                entry.blocked_s += _length(settled)
                entry.blocked = entry.blocked[len(settled) :]

    @contextmanager
    def call(self, session: str, *, blocked: bool) -> Iterator[None]:
        call = self.call_started(session)
        try:
            yield
        finally:
            self.call_ended(session, call, blocked=blocked)

    def on_event(self, event: Event) -> None:
        """Bus subscriber: environment task start and end."""
        kind, task = event.kind, event.task
        if not kind.startswith("environment.task.") or task is None:
            return
        phase = kind.rsplit(".", 1)[-1]
        now = self.clock()
        if phase == "started":
            self._env_open.setdefault(task, now)
        elif phase in _ENDS and task in self._env_open:
            self._env_done = _union([*self._env_done, (self._env_open.pop(task), now)])

    def _account(self, entry: _Session, now: float) -> TimeAccount:
        lo = entry.started
        wall = max(0.0, now - lo)
        env = _union(
            _clip([*self._env_done, *((s, now) for s in self._env_open.values())], lo, now)
        )
        calls = _union(_clip([*entry.done, *((s, now) for s in entry.calls.values())], lo, now))
        busy = _union([*env, *calls])
        # Idle: gaps between busy stretches (and before now) longer than the threshold.
        idle, edge = 0.0, lo
        for start, end in [*busy, (now, now)]:
            gap = start - edge
            if gap > self.idle_threshold_s:
                idle += gap
            edge = max(edge, end)
        # Whole milliseconds, so the parts add up exactly: active = reasoning + blocked.
        wall_ms = round(wall * 1000)
        active_ms = wall_ms - round(idle * 1000)
        blocked = entry.blocked_s + _length(_union(_clip(entry.blocked, lo, now)))
        blocked_ms = min(round(blocked * 1000), active_ms)
        return TimeAccount(
            wall_s=wall_ms / 1000,
            active_s=active_ms / 1000,
            environment_s=round(_length(env), 3),
            blocked_s=blocked_ms / 1000,
            reasoning_s=(active_ms - blocked_ms) / 1000,
            idle_s=(wall_ms - active_ms) / 1000,
            calls=entry.count,
        )

    def report(self, session: str | None = None) -> TimeReport:
        now = self.clock()
        entry = self._sessions.get(session) if session else None
        return TimeReport(
            idle_threshold_s=self.idle_threshold_s,
            workspace=self._account(self._sessions[WORKSPACE], now),
            session=self._account(entry, now) if entry else None,
            session_id=session if entry else None,
        )
