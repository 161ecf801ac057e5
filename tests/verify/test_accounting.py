from __future__ import annotations

import itertools
import random

import pytest

from agent_habitat.events import Event
from agent_habitat.verify.runner.accounting import TimeAccount, TimeAccounting, _length, _union


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _task(kind: str, task: str) -> Event:
    return Event(ts=0, kind=f"environment.task.{kind}", workspace="w", task=task)


def _adds_up(account: TimeAccount) -> None:
    assert account.active_s == pytest.approx(account.reasoning_s + account.blocked_s, abs=1e-9)
    assert account.active_s <= account.wall_s
    assert account.blocked_s <= account.active_s


def test_blocked_is_the_time_a_foreground_call_waited_and_reasoning_the_rest() -> None:
    clock = Clock()
    acc = TimeAccounting(idle_threshold_s=60, clock=clock)
    call = acc.call_started("s1")
    acc.on_event(_task("started", "v1.test.scoped"))
    clock.now += 10
    acc.on_event(_task("completed", "v1.test.scoped"))
    acc.call_ended("s1", call, blocked=True)
    clock.now += 5
    quick = acc.call_started("s1")
    clock.now += 1
    acc.call_ended("s1", quick, blocked=False)
    report = acc.report("s1")
    assert report.session is not None
    session = report.session
    assert (session.wall_s, session.blocked_s, session.environment_s) == (16.0, 10.0, 10.0)
    assert (session.active_s, session.reasoning_s, session.calls) == (16.0, 6.0, 2)
    _adds_up(session)
    _adds_up(report.workspace)


def test_a_gap_longer_than_the_threshold_is_idle_not_active() -> None:
    clock = Clock()
    acc = TimeAccounting(idle_threshold_s=30, clock=clock)
    acc.call_ended("s", acc.call_started("s"), blocked=False)
    clock.now += 100  # the person went for coffee
    call = acc.call_started("s")
    clock.now += 2
    acc.call_ended("s", call, blocked=True)
    clock.now += 10  # thinking, under the threshold
    session = acc.report("s").session
    assert session is not None
    assert session.wall_s == 112.0
    assert session.idle_s == 100.0
    assert session.active_s == 12.0
    assert session.blocked_s == 2.0
    assert session.reasoning_s == 10.0
    _adds_up(session)


def test_environment_work_with_no_call_is_not_idle_and_overlaps_count_once() -> None:
    clock = Clock()
    acc = TimeAccounting(idle_threshold_s=30, clock=clock)
    acc.call_ended("s", acc.call_started("s"), blocked=False)
    acc.on_event(_task("started", "a"))
    clock.now += 50
    acc.on_event(_task("started", "b"))
    clock.now += 50
    acc.on_event(_task("died", "a"))
    clock.now += 10
    acc.on_event(_task("cancelled", "b"))
    session = acc.report("s").session
    assert session is not None
    assert session.environment_s == 110.0
    assert session.idle_s == 0.0
    _adds_up(session)


def test_an_open_call_counts_up_to_now_and_an_unknown_session_reports_none() -> None:
    clock = Clock()
    acc = TimeAccounting(idle_threshold_s=30, clock=clock)
    acc.call_started("s")
    clock.now += 5
    report = acc.report("s")
    assert report.session is not None
    assert report.session.active_s == 5.0
    assert acc.report("nobody").session is None
    assert acc.report().workspace.calls == 1


def test_a_long_session_keeps_short_lists_and_adds_up_as_every_call_kept() -> None:
    clock = Clock()
    acc = TimeAccounting(idle_threshold_s=30, clock=clock)
    rng = random.Random(25)
    kept: list[tuple[float, float]] = []
    kept_blocked: list[tuple[float, float]] = []
    start = clock.now
    for _ in range(500):
        clock.now += rng.choice([0.5, 2.0, 45.0])  # some gaps are idle
        outer = acc.call_started("s1")
        began = clock.now
        inner = None
        if rng.random() < 0.3:  # a second call overlaps the first
            clock.now += 1.0
            inner = acc.call_started("s1")
            inner_began = clock.now
        clock.now += rng.choice([0.1, 3.0])
        blocked = rng.random() < 0.5
        acc.call_ended("s1", outer, blocked=blocked)
        kept.append((began, clock.now))
        if blocked:
            kept_blocked.append((began, clock.now))
        if inner is not None:
            clock.now += 2.0
            acc.call_ended("s1", inner, blocked=True)
            kept.append((inner_began, clock.now))
            kept_blocked.append((inner_began, clock.now))
    session = acc.report("s1").session
    assert session is not None
    busy = _union(kept)
    gaps = [b[0] - a[1] for a, b in itertools.pairwise([(start, start), *busy])]
    idle = sum(g for g in gaps if g > 30)
    assert session.idle_s == pytest.approx(idle, abs=2e-3)
    assert session.blocked_s == pytest.approx(_length(_union(kept_blocked)), abs=2e-3)
    assert session.calls == len(kept)
    _adds_up(session)
    entry = acc._sessions["s1"]
    # One stretch per idle gap, not one interval per call.
    assert len(entry.done) == 1 + sum(g > 30 for g in gaps[1:]) < len(kept) // 2
    assert len(entry.blocked) <= 1
