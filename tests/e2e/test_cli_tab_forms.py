"""The CLI verbs from the table, over real processes: the tab bare or as --tab, the views."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_habitat.cli import main

pytestmark = pytest.mark.e2e

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(project: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    def call(*argv: str) -> tuple[int, str, str]:
        code = main([*argv, "--project", str(project)])
        out, err = capsys.readouterr()
        return code, out, err

    return call


def test_a_bare_tab_and_a_tab_flag_name_the_same_tab(cli: Cli) -> None:
    assert cli("run", "echo one", "web")[:2] == (0, "one\n")
    assert cli("run", "echo two", "--tab", "web")[:2] == (0, "two\n")
    _, bare, _ = cli("history", "web", "--json")
    _, flagged, _ = cli("history", "--tab", "web", "--json")
    assert [row["command"] for row in json.loads(bare)["rows"]] == ["echo one", "echo two"]
    assert json.loads(flagged) == json.loads(bare)
    code, out, err = cli("last", "web")
    assert (code, out) == (0, "two\n")
    assert "#2 `echo two`" in err
    code, out, _ = cli("which", "web")
    assert code == 0
    assert out.startswith("web: ")


def test_wait_follows_the_run_exit_code_and_says_it(cli: Cli) -> None:
    assert cli("run", "exit 4", "--tab", "w")[0] == 4
    code, out, _ = cli("wait", "w", "--timeout-seconds", "5")
    assert (code, out) == (4, "exited · tab w #1 · exit 4\n")
    code, _, err = cli("last", "w")
    assert (code, "exit None" in err, "exit 4 (exited)" in err) == (0, False, True)


def test_which_of_a_missing_tab_exits_non_zero(cli: Cli) -> None:
    code, _, err = cli("which", "--tab", "nosuch")
    assert code != 0
    assert "no tab 'nosuch'" in err


def test_kill_close_wait_and_input_take_the_tab_either_way(cli: Cli) -> None:
    # Nothing is left running: a run started in-process is this test process's child, and
    # the next tests look at this process's children.
    assert cli("run", "true", "--tab", "idle")[0] == 0
    code, out, _ = cli("wait", "idle", "--timeout-seconds", "5")
    assert code == 0  # the finished run's end, at once: its exit code
    assert out.startswith("exited · tab idle #1 · exit 0")
    code, out, _ = cli("kill", "--tab", "idle")
    assert (code, out) == (1, "tab idle: nothing running\n")  # a refusal is non-zero
    code, _, err = cli("input", "idle", "hello\n")
    assert code == 2
    assert "tab 'idle' has no running command" in err
    code, _, err = cli("input", "--tab", "nobody", "hello\n", "--json")
    assert code == 1
    assert "no tab 'nobody'" in json.loads(err)["error"]
    code, out, _ = cli("close", "idle")
    assert (code, out) == (0, "closed idle\n")
    code, out, _ = cli("scene")
    assert "0/8 tabs" in out
