"""The ladder harness's figures (bench/ladder/): the miss bound, the import-time mutation
kind and the verdicts, which the docs tables are made from."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "ladder"))
from ladder_harness_mutations import _candidates
from ladder_harness_stats import miss_rate_upper, tails, targets


def test_miss_bound_is_clopper_pearson() -> None:
    assert abs(miss_rate_upper(0, 30) - (1 - 0.05 ** (1 / 30))) < 1e-9  # ≈ 3/n
    assert abs(miss_rate_upper(1, 30) - 0.1486) < 1e-3
    assert miss_rate_upper(0, 0) == 1.0
    assert miss_rate_upper(3, 3) == 1.0


def test_import_time_constants_are_module_data_only() -> None:
    source = (
        '__all__ = ["f"]\n'
        'TABLE = {"a": 1, "b": f"{2}"}\n'
        "def f(x):\n"
        '    local = "x"\n'
        "    return TABLE[x]\n"
    )
    found = {m.after for m in _candidates("m.py", source) if m.kind == "import-time constant"}
    assert found == {
        'TABLE = {\'a~\': 1, "b": f"{2}"}',
        'TABLE = {"a": 2, "b": f"{2}"}',
        'TABLE = {"a": 1, \'b~\': f"{2}"}',
        'TABLE = {"a": 1, "b": f"{3}"}',  # an expression inside the f-string: data too
    }


def _row(host: float, caught: bool = True, miss: bool = False) -> dict[str, object]:
    return {
        "ours_selected": 4, "testmon_selected": 2, "full_caught": caught, "miss": miss,
        "false_red": False, "ladder_state": "red", "ladder_wall_s": host, "full_s": 2.0,
        "testmon_s": 1.0, "oneshot_wall_s": 2.5, "oneshot_state": "red",
    }  # fmt: skip


def test_targets_fail_on_a_miss_and_a_slow_host_and_are_unmeasured_without_data() -> None:
    good = dict(targets(tails([_row(1.2), _row(1.3)], [0.2])))
    assert all(good.values())
    bad = dict(targets(tails([_row(1.5), _row(2.5, miss=True)], [])))
    assert bad["misses 0"] is False
    assert bad["host ≤ testmon + 0.3 s"] is False
    assert bad["comment edit ≤ 300 ms (host)"] is None
