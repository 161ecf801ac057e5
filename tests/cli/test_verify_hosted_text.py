"""What `habitat verify` shows a person while it waits on the host and once the verdict is in.
Found on wcwidth 0.2.13: the first verify in a terminal started the host (3.8 s) and its
`waited` line said 3.6 s of a 7.5 s wait; its live line read "snapshot, warm-up, selection"
at 3/3 rungs, while the runner was writing the verdict."""

from __future__ import annotations

import io
from typing import Any

import pytest

from agent_habitat.cli.verdict_text import render_timing, render_verdict
from agent_habitat.cli.verify_hosted import _LiveLine, with_host_start


def _result() -> dict[str, Any]:
    return {
        "state": "red",
        "policy": "standard",
        "snapshot": "70e1dbf66ce2b8d5",
        "duration_s": 3.49,
        "rungs": [],
        "timing": {"wall_s": 3.63, "rungs_s": 3.35, "prepare_s": 0.25, "baseline_s": 0.03},
    }


def test_the_waited_line_counts_the_host_the_verify_started() -> None:
    out = io.StringIO()
    render_verdict(with_host_start(_result(), 3.85), out)
    line = next(x for x in out.getvalue().splitlines() if x.startswith("waited"))
    assert line.startswith("waited 7.48s = ")
    assert "startup 3.85s" in line


def test_a_verify_on_a_running_host_waited_what_the_climb_took() -> None:
    result = _result()
    assert with_host_start(result, 0.0) is result
    assert render_timing(result["timing"]).startswith("waited 3.63s = rungs 3.35s")


def test_the_live_line_says_concluding_once_every_rung_is_done(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = _LiveLine("epoch 17")
    line.show({"done": 3, "total": 3, "message": "running"})
    assert "concluding" in capsys.readouterr().err
    line.show({"done": 0, "total": 3, "message": "running"})
    assert "snapshot, warm-up, selection" in capsys.readouterr().err
