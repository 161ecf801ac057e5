"""A person at a terminal with no host running: the first shell command answers as before
(in its own process), then starts the workspace host; the next one is asked of it. Scripts
(no terminal) start nothing."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.cli import main
from agent_habitat.reach import find_host
from agent_habitat.reach.launcher import host_files, spawn_host
from agent_habitat.reach.lock import is_held
from agent_habitat.reach.plain_client import starting_host

pytestmark = pytest.mark.e2e

# A bound for a hung process, not a speed claim (the first command builds the habitat).
_CALL_TIMEOUT = 180
_PROBE = (
    "import sys\nfrom agent_habitat.cli import main\ncode = main(sys.argv[1:])\n"
    "print('embedded:', 'agent_habitat.habitat' in sys.modules)\nsys.exit(code)"
)


def _at_a_terminal(project: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """`habitat ARGV` with a terminal on stdin and stderr (stdout a pipe), and what the
    terminal showed."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, *argv, "--project", str(project)],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=follower,
            env={k: v for k, v in os.environ.items() if k != "CI"},
            text=True,
            timeout=_CALL_TIMEOUT,
            check=False,
        )
        os.set_blocking(leader, False)
        try:
            shown = os.read(leader, 1 << 16).decode("utf-8", "replace")
        except BlockingIOError:
            shown = ""
    finally:
        os.close(leader)
        os.close(follower)
    return done, shown


def test_at_a_terminal_the_first_command_starts_the_host_and_the_next_is_asked_of_it(
    project: Path,
) -> None:
    first, shown = _at_a_terminal(project, "run", "echo one")
    assert first.returncode == 0
    assert first.stdout.startswith("one\n")
    assert "embedded: True" in first.stdout  # answered in its own process, as before
    assert "started the workspace host" in shown
    # Right behind it, whether or not the host listens yet: it waits for the starting host.
    second, shown = _at_a_terminal(project, "run", "echo two")
    assert second.returncode == 0
    assert second.stdout.startswith("two\n")
    assert "embedded: False" in second.stdout
    assert "started" not in shown
    record = find_host(project)
    assert record is not None
    history, _ = _at_a_terminal(project, "history", "--json")
    assert "echo one" in history.stdout  # one state: the host sees the first run too
    assert "echo two" in history.stdout


def test_a_script_with_no_host_starts_none(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "run", "echo hi", "--project", str(project)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=_CALL_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0
    assert "embedded: True" in done.stdout
    assert not is_held(host_files(project).lock)


def test_a_spawned_host_holds_the_lock_from_its_first_moment(project: Path) -> None:
    pid = spawn_host(project)
    assert pid is not None
    assert is_held(host_files(project).lock)  # before the host ran a line of its own
    assert spawn_host(project) is None  # one is starting: no second one
    host = starting_host(project, within=_CALL_TIMEOUT)
    assert host is not None
    assert host.pid == pid


def test_host_status_waits_for_a_starting_host_instead_of_saying_none_runs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pid = spawn_host(project)
    assert main(["host", "status", "--project", str(project)]) == 0
    assert f"host pid {pid}" in capsys.readouterr().out


def test_a_command_refused_at_the_terminal_starts_no_host(project: Path) -> None:
    done, shown = _at_a_terminal(project, "run", "")
    assert done.returncode == 2  # bad input: nothing ran
    assert "started the workspace host" not in shown
    assert not is_held(host_files(project).lock)


def test_a_run_that_exits_2_is_not_a_refusal_and_starts_the_host(project: Path) -> None:
    done, shown = _at_a_terminal(project, "run", "exit 2")
    assert done.returncode == 2  # the command's own code: it ran
    assert "started the workspace host" in shown
