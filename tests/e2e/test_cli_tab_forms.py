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


def test_kill_close_and_wait_take_the_tab_either_way(cli: Cli) -> None:
    cli("run", "sleep 300", "--tab", "long", "--background")
    code, out, _ = cli("wait", "long", "--timeout-seconds", "0.2")
    assert code == 1  # neither a match nor the exit: the wait timed out
    assert out.startswith("timeout")
    code, out, _ = cli("kill", "--tab", "long")
    assert code == 0
    assert "tab long #1: SIGTERM" in out
    code, out, _ = cli("close", "long")
    assert (code, out) == (0, "closed long\n")
    code, out, _ = cli("scene")
    assert "0/8 tabs" in out


def test_input_takes_the_tab_then_the_text(cli: Cli) -> None:
    cli("run", "cat", "--tab", "i", "--interactive", "--background")
    # stdin belongs to the process that started the run: this one has none to write to.
    code, _, err = cli("input", "i", "hello\n")
    assert code == 2
    assert "belonged to an earlier habitat process" in err
    code, _, err = cli("input", "--tab", "i", "hello\n", "--json")
    assert code == 2
    assert "belonged to an earlier habitat process" in json.loads(err)["error"]
    assert cli("kill", "i")[0] == 0
