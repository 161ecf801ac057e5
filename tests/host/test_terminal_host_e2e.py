"""`terminal_host` of the escape server on a real host: alive, hung (SIGSTOP), dead."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_habitat.mcp_tools.terminal import TerminalHostArgs, host_action
from agent_habitat.proc import ProcessRecord, is_alive, process_create_time
from agent_habitat.reach import ensure_host, find_host
from agent_habitat.reach.launcher import host_files
from agent_habitat.reach.lock import is_held
from agent_habitat.testing import eventually

pytestmark = pytest.mark.e2e


def act(project: Path, action: str) -> dict[str, object]:
    args = TerminalHostArgs.model_validate({"action": action, "workspace": str(project)})
    return host_action(args, Path("/")).model_dump()


@pytest.fixture
def hung(project: Path) -> Iterator[int]:
    """A host stopped with SIGSTOP; continued afterwards if a test left it so."""
    pid = ensure_host(project).record.pid
    os.kill(pid, signal.SIGSTOP)
    yield pid
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass


def test_status_of_a_live_host_says_it_answers(project: Path) -> None:
    pid = ensure_host(project).record.pid
    result = act(project, "status")
    assert (result["host_running"], result["pid"], result["responding"]) == (True, pid, True)
    assert result["done"] is False
    assert result["workspace"] == str(project.resolve())


def test_status_of_a_hung_host_says_it_does_not_answer(project: Path, hung: int) -> None:
    result = act(project, "status")
    assert (result["host_running"], result["pid"], result["responding"]) == (True, hung, False)
    assert "does not answer" in str(result["message"])


def test_restart_kills_a_hung_host_and_starts_one_that_answers(project: Path, hung: int) -> None:
    created = process_create_time(hung)
    assert created is not None
    result = act(project, "restart")
    assert result["previous_pid"] == hung
    assert result["done"] is True
    assert result["responding"] is True
    assert result["pid"] != hung
    assert not is_alive(ProcessRecord(hung, created))
    record = find_host(project)
    assert record is not None
    assert record.pid == result["pid"]
    assert "killed host pid" in str(result["message"])


def test_stop_kills_a_hung_host(project: Path, hung: int) -> None:
    result = act(project, "stop")
    assert (result["done"], result["host_running"], result["previous_pid"]) == (True, False, hung)
    assert not is_held(host_files(project).lock)


@pytest.mark.anyio
async def test_a_dead_host_is_reported_and_restart_starts_one(project: Path) -> None:
    pid = ensure_host(project).record.pid
    os.kill(pid, signal.SIGKILL)
    await eventually(lambda: not is_held(host_files(project).lock))
    status = act(project, "status")
    assert (status["host_running"], status["done"]) == (False, False)
    assert "no host runs" in str(status["message"])
    restarted = act(project, "restart")
    assert restarted["host_running"] is True
    assert restarted["responding"] is True
    assert restarted["pid"] != pid
    stopped = act(project, "stop")
    assert (stopped["done"], stopped["previous_pid"]) == (True, restarted["pid"])
    assert find_host(project) is None
    assert act(project, "stop")["done"] is False
