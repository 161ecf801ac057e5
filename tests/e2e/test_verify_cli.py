"""`habitat verify` in-process: exit codes, JSON, the rich display, configuration errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agent_habitat.cli import main
from agent_habitat.cli.demo_sample import break_sample, build_sample
from agent_habitat.verify import stop_type_daemon

pytestmark = pytest.mark.e2e


@pytest.fixture
def calc(tmp_path: Path) -> Iterator[Path]:
    root = build_sample(tmp_path / "calc")
    yield root
    anyio.run(stop_type_daemon, root)


def test_verify_json_exits_zero_when_green_and_one_when_red(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (calc / "src/calc/text.py").write_text(
        (calc / "src/calc/text.py").read_text(encoding="utf-8") + "\nX = 1\n", encoding="utf-8"
    )
    args = ["verify", "--project", str(calc), "--rung", "diagnose.files", "--json", "--wait"]
    assert main(args) == 0
    green = json.loads(capsys.readouterr().out)
    assert green["state"] == "green"
    assert green["touched"] == ["src/calc/text.py"]
    break_sample(calc, "lint")
    assert main(args) == 1
    red = json.loads(capsys.readouterr().out)
    assert red["rungs"][0]["diagnostics"][0]["code"] == "F401"
    assert red["snapshot"] != green["snapshot"]


def test_verify_shows_the_rungs_and_the_verdict(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    break_sample(calc, "test")
    code = main(["verify", "--project", str(calc), "--policy", "strict", "--filter", "-k add"])
    out = capsys.readouterr().out
    assert code == 1
    assert "ladder RED" in out
    assert "tests/test_arith.py::test_add" in out
    assert "explicit filter" in out


def test_files_given_on_the_command_line_are_the_change(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "verify",
            "--project",
            str(calc),
            "--rung",
            "test.scoped",
            "--json",
            "--files",
            "src/calc/text.py",
        ]
    )
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert result["touched"] == ["src/calc/text.py"]
    assert result["selection"]["tests"] == ["tests/test_text.py"]


def test_a_bad_ladder_key_fails_with_a_message_naming_it(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject = calc / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + "dmypi = true\n", encoding="utf-8")
    code = main(["verify", "--project", str(calc), "--json"])
    err = capsys.readouterr().err
    assert code != 0
    assert "[tool.habitat.ladder].dmypi" in err


def test_verify_events_land_in_the_workspace_journal(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", "--project", str(calc), "--rung", "diagnose.files", "--json"]) == 0
    capsys.readouterr()
    assert main(["events", "--project", str(calc), "--json"]) == 0
    kinds = [json.loads(line)["kind"] for line in capsys.readouterr().out.splitlines()]
    assert kinds == ["environment.task.started", "environment.task.completed"]
