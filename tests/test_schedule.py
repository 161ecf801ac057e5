"""The order `make test` hands out modules in (tests/schedule.py): listed modules longest
first, a module the list does not name before them, and the list made from a durations report
with every module it times."""

from __future__ import annotations

import schedule

LISTED = ["# a comment", "tests/e2e/test_long.py", "", "tests/verify/test_mid.py"]


def test_a_module_the_list_does_not_name_goes_before_the_listed_ones_in_its_own_order() -> None:
    collected = [
        "tests/core/test_new.py::test_a",
        "tests/verify/test_mid.py::test_b",
        "tests/e2e/test_long.py::test_c[x]",
        "tests/verify/test_newer.py::test_d",
        "tests/e2e/test_long.py::test_e",
        "tests/core/test_new.py::test_f",
    ]
    assert sorted(collected, key=schedule.rank_of(LISTED)) == [
        "tests/core/test_new.py::test_a",
        "tests/verify/test_newer.py::test_d",
        "tests/core/test_new.py::test_f",
        "tests/e2e/test_long.py::test_c[x]",
        "tests/e2e/test_long.py::test_e",
        "tests/verify/test_mid.py::test_b",
    ]


def test_the_list_names_every_timed_module_longest_first() -> None:
    durations = "\n".join(
        [
            "============================= slowest durations ==============================",
            "9.00s call     tests/e2e/test_a.py::test_one",
            "6.00s setup    tests/host/test_b.py::test_two",
            "5.00s call     tests/host/test_b.py::test_two",
            "0.01s teardown tests/core/test_c.py::test_three[p]",
            "(120 durations < 0.005s hidden.  Use -vv to show these durations.)",
        ]
    )
    assert schedule.from_durations(durations) == [
        "tests/host/test_b.py",
        "tests/e2e/test_a.py",
        "tests/core/test_c.py",
    ]
