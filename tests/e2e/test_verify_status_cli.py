"""`habitat status` and `habitat cancel` in-process: the workspace's verify as recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_habitat.cli import main
from agent_habitat.cli.demo_sample import build_sample

pytestmark = pytest.mark.e2e


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    root = build_sample(tmp_path / "calc")
    _append(root / "src/calc/text.py", "X = 1\n")
    return root


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_status_reads_the_recorded_epoch_and_sees_a_later_write_as_stale(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = ["--project", str(calc)]
    assert main(["status", *project, "--json"]) == 1
    never = json.loads(capsys.readouterr().out)
    assert never["epoch"] is None
    assert never["served_by"] is None
    assert main(["verify", *project, "--policy", "minimal", "--json", "--wait"]) == 0
    capsys.readouterr()
    assert main(["status", *project, "--json"]) == 0
    green = json.loads(capsys.readouterr().out)
    assert (green["green"], green["recorded"], green["epoch"]["state"]) == (True, True, "green")
    _append(calc / "src/calc/arith.py", "Y = 2\n")
    assert main(["status", *project]) == 1
    out = capsys.readouterr().out
    assert out.startswith("state=stale green=false")
    assert "src/calc/arith.py" in out
    assert "no verify runner serves this workspace" in out


def test_cancel_without_a_runner_anywhere_says_there_is_nothing_to_cancel(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cancel", "--project", str(calc)]) == 0
    assert capsys.readouterr().out.startswith("cancelled=false: nothing to cancel")
