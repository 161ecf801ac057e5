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
from mypy_seed import seed_mypy

pytestmark = pytest.mark.e2e


@pytest.fixture
def calc(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = build_sample(tmp_path / "calc")
    seed_mypy(root, tmp_path_factory)
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


def test_files_naming_a_missing_file_is_a_usage_error_not_a_green_run(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["verify", "--project", str(calc), "--files", "src/calc/typo.py"])
    captured = capsys.readouterr()
    assert code == 2
    assert "habitat: --files: src/calc/typo.py does not exist" in captured.err
    assert "(files)" not in captured.err  # the CLI names its flag, not the MCP field too
    assert "GREEN" not in captured.out.upper()
    code = main(["verify", "--project", str(calc), "--files", "src/calc/typo.py", "--json"])
    error = json.loads(capsys.readouterr().err)
    assert code == 2
    assert error["field"] == "files"
    assert error["error"].startswith("--files: src/calc/typo.py does not exist")


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
    # A clean tree: nothing to verify (exit 4), and the rung's events are journaled anyway.
    assert main(["verify", "--project", str(calc), "--rung", "diagnose.files", "--json"]) == 4
    assert json.loads(capsys.readouterr().out)["state"] == "nothing_to_verify"
    assert main(["events", "--project", str(calc), "--json"]) == 0
    kinds = [json.loads(line)["kind"] for line in capsys.readouterr().out.splitlines()]
    # The first verify a person asks for is their trust in the project (issue 23), said once.
    assert kinds == ["project.trusted", "environment.task.started", "environment.task.completed"]


def test_an_incomplete_ladder_has_its_own_exit_code_and_says_what_to_configure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.txt").write_text("buy milk\n", encoding="utf-8")
    assert main(["verify", "--project", str(folder), "--json"]) == 3
    result = json.loads(capsys.readouterr().out)
    assert result["state"] == "incomplete"
    assert {r["state"] for r in result["rungs"]} == {"skipped"}
    assert "[tool.habitat.ladder]" in result["reason"]
    assert main(["verify", "--project", str(folder)]) == 3
    assert "ladder INCOMPLETE" in capsys.readouterr().out


def test_the_verify_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "3 incomplete" in text
    assert "4 nothing to verify" in text


def test_a_git_that_refuses_to_work_is_reported_with_its_words_and_the_fix(
    calc: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # git's own test switch makes it treat the repository as owned by another user.
    monkeypatch.setenv("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1")
    assert main(["verify", "--project", str(calc), "--json"]) == 1
    err = capsys.readouterr().err
    assert "dubious ownership" in err
    assert f"git config --global --add safe.directory {calc}" in err


def test_a_verify_in_its_own_process_counts_its_start_apart_from_the_snapshot(
    calc: Path,
) -> None:
    # What a person waits for `habitat verify --no-host` starts with the interpreter and its
    # imports: in the wall, as `start_s`, never as the snapshot and selection (`prepare_s`).
    import subprocess
    import sys
    import time

    break_sample(calc, "lint")
    argv = [sys.executable, "-m", "agent_habitat", "verify", "--no-host", "--json"]
    began = time.monotonic()
    done = subprocess.run(
        [*argv, "--project", str(calc), "--rung", "diagnose.files"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    waited = time.monotonic() - began
    assert done.returncode == 1, done.stderr
    timing = json.loads(done.stdout)["timing"]
    assert timing["start_s"] > 0
    assert timing["wall_s"] <= waited  # never more than the person waited
    parts = ("rungs_s", "prepare_s", "start_s", "baseline_s", "queue_s", "coalesce_s")
    assert round(sum(timing.get(p) or 0 for p in parts), 3) == timing["wall_s"]


def test_a_verify_in_its_own_process_exits_with_its_verdict_and_leaves_nothing_running(
    calc: Path,
) -> None:
    # Its process ends without the interpreter's teardown once the verdict is out and the
    # warm pytest it started is stopped: the code is the verdict's, the JSON whole.
    import subprocess
    import sys

    import psutil

    argv = [sys.executable, "-m", "agent_habitat", "verify", "--no-host", "--json"]
    for broken, code in ((None, 0), ("test", 1)):
        if broken is not None:
            break_sample(calc, broken)
        else:
            (calc / "src/calc/arith.py").write_text(
                (calc / "src/calc/arith.py").read_text(encoding="utf-8") + "\nX = 1\n",
                encoding="utf-8",
            )
        done = subprocess.run(
            [*argv, "--project", str(calc)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        result = json.loads(done.stdout)
        assert (done.returncode, result["state"]) == (code, "green" if code == 0 else "red")
        scoped = next(r for r in result["rungs"] if r["rung"] == "test.scoped")
        assert any("forked from the warm pytest" in n for n in scoped["notes"]), scoped
        left = [
            p.pid
            for p in psutil.process_iter(["cmdline"])
            if "habitat_pytest_zygote" in str(p.info["cmdline"])
            and str(calc) in (p.info["cmdline"] or [])
        ]
        assert left == []
