"""The CLI in-process: `main(argv)` over real processes and real state."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_habitat.cli import main

Cli = Callable[..., tuple[int, str, str]]
"""`cli("run", "echo hi")` → (exit code, stdout, stderr) of `habitat run echo hi --project …`."""


@pytest.fixture
def cli(project: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    def call(*argv: str) -> tuple[int, str, str]:
        code = main([*argv, "--project", str(project)])
        out, err = capsys.readouterr()
        return code, out, err

    return call


def test_run_prints_output_and_exits_with_the_command_code(cli: Cli) -> None:
    code, out, err = cli("run", "echo hello; exit 3")
    assert code == 3
    assert out == "hello\n"
    assert "exit 3" in err


def test_run_json_prints_the_result_model(cli: Cli) -> None:
    code, out, _ = cli("run", "echo hi", "--tab", "j", "--json")
    data = json.loads(out)
    assert code == 0
    assert (data["tab"], data["state"], data["exit_code"], data["output"]) == (
        "j",
        "exited",
        0,
        "hi\n",
    )
    assert {"index", "pid", "duration_s", "omitted_bytes", "spool"} <= set(data)


def test_env_and_cwd_flags(cli: Cli, tmp_path: Path) -> None:
    code, out, _ = cli(
        "run", 'echo "$A $B"; pwd', "--env", "A=1", "--env", "B=two", "--cwd", str(tmp_path)
    )
    assert code == 0
    assert out == f"1 two\n{tmp_path}\n"


def test_background_then_wait_last_history_scene(cli: Cli) -> None:
    code, _, err = cli("run", "echo working; echo done-now", "--tab", "bg", "--background")
    assert code == 0
    assert "running in tab bg" in err
    code, out, _ = cli("wait", "--tab", "bg", "--until", "done-now", "--timeout-seconds", "10")
    assert code == 0
    assert "matched" in out
    code, out, _ = cli("last", "--tab", "bg", "--grep", "work")
    assert out == "working\n"
    code, out, _ = cli("history", "--tab", "bg", "--json")
    assert json.loads(out)["rows"][0]["command"] == "echo working; echo done-now"
    code, out, _ = cli("scene", "--json")
    assert [t["name"] for t in json.loads(out)["tabs"]] == ["bg"]


def test_rerun_kill_close_which(cli: Cli) -> None:
    cli("run", "echo again")
    code, out, _ = cli("rerun")
    assert (code, out) == (0, "again\n")
    cli("run", "sleep 300", "--tab", "long", "--background")
    code, out, _ = cli("kill", "long", "--json")
    assert code == 0
    assert json.loads(out)["killed"] is True
    code, out, _ = cli("close", "long")
    assert "closed long" in out
    code, out, _ = cli("which", "--json")
    assert json.loads(out)["shell"] in ("bash", "sh", "zsh")


def test_usage_errors_exit_2_with_a_message(cli: Cli) -> None:
    code, _, err = cli("run", "ls", "--tab", "bad name")
    assert code == 2
    assert "--tab" in err
    code, _, err = cli("run", "ls", "--env", "NOEQUALS")
    assert code == 2
    assert "KEY=VALUE" in err
    code, _, err = cli("run", "ls", "--timeout-seconds", "-1")
    assert code == 2
    assert "--timeout-seconds" in err
    code, _, err = cli("last", "--tab", "nobody")
    assert code == 1
    assert "no tab 'nobody'" in err


def test_timeout_exit_code_is_124(cli: Cli) -> None:
    code, _, err = cli("run", "sleep 30", "--timeout-seconds", "0.2")
    assert code == 124
    assert "timed_out" in err


def test_events_lists_the_journal(cli: Cli) -> None:
    cli("run", "true", "--tab", "ev")
    code, out, _ = cli("events", "--json")
    assert code == 0
    kinds = [json.loads(line)["kind"] for line in out.splitlines()]
    assert kinds == ["shell.tab.opened", "shell.run.started", "shell.run.exited"]
    first_id = json.loads(out.splitlines()[0])["id"]
    _code, out, _ = cli("events", "--since", str(first_id))
    assert len(out.splitlines()) == 2


def test_events_follow_prints_new_events_as_they_happen(project: Path) -> None:
    import os
    import subprocess
    import sys

    follower = subprocess.Popen(
        [sys.executable, "-m", "agent_habitat", "events", "--follow", "--project", str(project)],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ,
    )
    try:
        assert main(["run", "echo followed", "--tab", "f", "--project", str(project)]) == 0
        assert follower.stdout is not None
        seen: list[str] = []
        for line in follower.stdout:  # bounded by the pytest timeout
            seen.append(line)
            if "shell.run.exited" in line:
                break
        assert any("shell.run.started" in line and "tab=f" in line for line in seen)
    finally:
        follower.kill()
        follower.wait()
        if follower.stdout is not None:
            follower.stdout.close()
