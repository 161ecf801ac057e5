"""The wall a person waited, and where it went: the parts add up to it exactly."""

from __future__ import annotations

from agent_habitat.verify.timing import timing_of


def test_the_parts_add_up_to_the_wall_and_a_part_that_took_no_time_is_absent() -> None:
    timing = timing_of(2.5, [0.4, 1.2, None], queue_s=0.3, baseline_s=0.2)
    assert timing.wall_s == 2.5
    assert timing.rungs_s == 1.6
    assert timing.queue_s == 0.3
    assert timing.baseline_s == 0.2
    assert timing.coalesce_s is None
    assert timing.prepare_s == 0.4  # the rest: snapshot, selection, the runner's own work
    parts = [timing.rungs_s, timing.queue_s, timing.baseline_s, timing.prepare_s]
    assert round(sum(parts), 3) == timing.wall_s
    assert timing.model_dump(exclude_none=True).keys() == {
        "wall_s",
        "rungs_s",
        "queue_s",
        "baseline_s",
        "prepare_s",
    }


def test_parts_rounded_apart_never_make_a_negative_remainder() -> None:
    timing = timing_of(1.0004, [0.5004, 0.5004])
    assert timing.prepare_s is None
    assert timing.wall_s == 1.0


def test_a_process_start_is_a_part_of_its_own_not_the_snapshot() -> None:
    timing = timing_of(3.0, [0.5], start_s=2.0)
    assert (timing.start_s, timing.prepare_s) == (2.0, 0.5)
