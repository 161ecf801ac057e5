from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agent_habitat.shell import Shell, shells
from agent_habitat.shell.models import RunArgs, WhichArgs
from agent_habitat.testing import FakeSpawner

pytestmark = pytest.mark.anyio


async def test_which_asks_a_shell_its_version_once_and_off_the_event_loop(
    habitat: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, bool]] = []

    def ask(executable: str) -> str:
        asked.append((executable, threading.current_thread() is threading.main_thread()))
        return "fakesh 1.0"

    monkeypatch.setattr(shells, "ask_version", ask)
    monkeypatch.setattr(shells, "_VERSIONS", {})
    first = await habitat.which(WhichArgs())
    await habitat.run(RunArgs(command="true", tab="other"))
    second = await habitat.which(WhichArgs(tab="other"))
    assert (first.version, second.version) == ("fakesh 1.0", "fakesh 1.0")
    assert asked == [(first.executable, False)]


async def test_which_of_the_default_tab_before_its_first_run_names_the_default_cwd(
    habitat: Shell, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shells, "ask_version", lambda executable: "x")
    monkeypatch.setattr(shells, "_VERSIONS", {})
    result = await habitat.which(WhichArgs())
    assert (result.cwd, result.state, result.pid) == (str(project), "idle", None)


async def test_which_of_a_busy_tab_names_the_running_pid(
    habitat: Shell, spawner: FakeSpawner, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_habitat.testing import Script

    monkeypatch.setattr(shells, "ask_version", lambda executable: "x")
    monkeypatch.setattr(shells, "_VERSIONS", {})
    spawner.scripts["serve"] = Script(keep_running=True)
    await habitat.run(RunArgs(command="serve", background=True))
    result = await habitat.which(WhichArgs())
    assert (result.state, result.pid) == ("running", spawner.last.pid)
