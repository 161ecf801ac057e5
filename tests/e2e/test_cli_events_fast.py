"""`habitat events` with no host reads the journal from `state.db` alone when opening the
habitat would record nothing, and prints what the full path prints; a run marked running
(whose end the full path may record first) and configuration take the full path."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_habitat.cli import main
from cli_probe import Probed, full_path, probe

_FULL = "import agent_habitat.cli.events_fast as fast\nfast.fast_events = lambda a: None\n"
"""The full path alone: the fast reader stood down."""


def _events(root: Path, *argv: str, **env: str) -> Probed:
    probed = probe(root, "events", *argv, **env)
    assert probed.code == 0, probed.loaded
    return probed


def _prepared(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> None:
    assert main([*argv, "--project", str(root)]) == 0, capsys.readouterr().err
    capsys.readouterr()


def test_with_no_host_the_journal_is_read_as_the_full_path_prints_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _prepared(capsys, project, "run", "echo one")
    _prepared(capsys, project, "run", "echo two", "--tab", "b")
    with full_path(project, _FULL) as answer:  # one interpreter for the full path's answers
        for extra in ((), ("--json",), ("--since", "2")):
            argv = (*extra, "--project", str(project))
            fast = _events(project, *argv)
            assert fast.loaded == "", extra
            full = answer("events", *argv)
            assert full.code == 0, full.stderr
            assert "agent_habitat.habitat" in full.loaded
            assert fast.stdout == full.stdout, extra
    assert "shell.run.exited tab=b" in fast.stdout


def test_a_run_marked_running_or_a_configured_value_takes_the_full_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _prepared(capsys, project, "run", "echo one")
    configured = _events(project, "--project", str(project), HABITAT_MAX_TABS="8")
    assert "agent_habitat.habitat" in configured.loaded
    _prepared(capsys, project, "run", "sleep 600", "--tab", "srv", "--background")
    try:
        seen = _events(project, "--project", str(project))
        assert "agent_habitat.habitat" in seen.loaded
        assert "shell.run.started tab=srv" in seen.stdout
    finally:
        _prepared(capsys, project, "kill", "srv")
    after = _events(project, "--project", str(project))
    assert after.loaded == ""  # the kill recorded its end: nothing to do
    assert "shell.run.killed tab=srv" in after.stdout
