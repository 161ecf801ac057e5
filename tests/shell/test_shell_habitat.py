"""The verbs' logic over scripted commands: caps, history, refusals, cwd and env carry-over,
rerun, kill. No shell starts; each test takes milliseconds."""

from __future__ import annotations

import functools
import shutil
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

from agent_habitat.config import ShellConfig
from agent_habitat.errors import BusyTabError, NotFoundError, UsageError
from agent_habitat.events import Event
from agent_habitat.shell import Shell
from agent_habitat.shell.models import (
    CloseArgs,
    HistoryArgs,
    InputArgs,
    KillArgs,
    RerunArgs,
    RunArgs,
    WaitArgs,
)
from agent_habitat.shell.run_store import RunRow
from agent_habitat.shell.spool_keeping import SpoolKeeping
from agent_habitat.testing import FakeClock, FakeSpawner, Script, eventually

from .conftest import OpenHabitat

pytestmark = pytest.mark.anyio

T = TypeVar("T")


async def advance_while(clock: FakeClock, seconds: float, call: Callable[[], Awaitable[T]]) -> T:
    """Start `call`, move the clock `seconds` ahead, and return what `call` returned."""
    result: list[T] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def go() -> None:
                result.append(await call())

            tg.start_soon(go)
            await clock.advance(seconds)
    return result[0]


# caps and history
async def test_the_ninth_tab_is_refused_naming_the_open_ones(habitat: Shell) -> None:
    for n in range(8):
        await habitat.run(RunArgs(command="true", tab=f"t{n}"))
    open_tabs = ", ".join(f"t{n}" for n in range(8))
    with pytest.raises(UsageError) as refused:
        await habitat.run(RunArgs(command="true", tab="t8"))
    # As the CLI's user closes one; the MCP tools word it as theirs (test_tools).
    assert str(refused.value) == (
        f"tab limit reached (8 open: {open_tabs}); "
        "close one with `habitat close TAB` or reuse an open tab"
    )
    assert [t.name for t in (await habitat.scene()).tabs] == [f"t{n}" for n in range(8)]
    assert (await habitat.run(RunArgs(command="true", tab="t3"))).index == 2


async def test_closing_a_tab_frees_its_slot(open_habitat: OpenHabitat) -> None:
    async with open_habitat(ShellConfig(max_tabs=1)) as habitat:
        await habitat.run(RunArgs(command="true", tab="a"))
        with pytest.raises(UsageError, match=r"tab limit reached \(1 open: a\)"):
            await habitat.run(RunArgs(command="true", tab="b"))
        closed = await habitat.close(CloseArgs(tab="a"))
        assert (closed.killed, closed.open_tabs) == (False, [])
        assert (await habitat.run(RunArgs(command="true", tab="b"))).index == 1


async def test_history_keeps_the_newest_rows_and_removes_older_run_folders(
    open_habitat: OpenHabitat,
) -> None:
    async with open_habitat(ShellConfig(history_rows=3)) as habitat:
        results = [await habitat.run(RunArgs(command=f"echo {n}")) for n in range(5)]
        rows = (await habitat.history(HistoryArgs(limit=100))).rows
        assert [(r.index, r.command) for r in rows] == [(3, "echo 2"), (4, "echo 3"), (5, "echo 4")]
    # Removed a few at a time after the answers, the rest as the habitat closes.
    folders = [Path(r.spool).parent for r in results]
    assert [folder.exists() for folder in folders] == [False, False, True, True, True]


async def test_trimmed_run_folders_go_while_the_habitat_runs_a_batch_at_a_time(
    open_habitat: OpenHabitat,
) -> None:
    async with open_habitat(ShellConfig(history_rows=1)) as habitat:
        results = [await habitat.run(RunArgs(command=f"echo {n}")) for n in range(17)]
        folders = [Path(r.spool).parent for r in results]
        await eventually(lambda: not any(folder.exists() for folder in folders[:16]))
        assert folders[16].exists()


async def test_history_limit_returns_the_newest_rows_oldest_first(habitat: Shell) -> None:
    for n in range(4):
        await habitat.run(RunArgs(command=f"echo {n}"))
    rows = (await habitat.history(HistoryArgs(limit=2))).rows
    assert [r.index for r in rows] == [3, 4]


# refusals
async def test_a_busy_tab_refuses_a_second_run_naming_the_running_one(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    spawner.scripts["serve"] = Script(output="up\n", keep_running=True)
    started = await habitat.run(RunArgs(command="serve", tab="srv", background=True))
    assert (started.state, started.pid) == ("running", spawner.last.pid)
    server = spawner.last
    with pytest.raises(BusyTabError, match=r"tab 'srv' is busy running #1 `serve`"):
        await habitat.run(RunArgs(command="true", tab="srv"))
    assert (await habitat.run(RunArgs(command="true", tab="other"))).exit_code == 0
    server.exit(0)
    await habitat.wait(WaitArgs(tab="srv"))
    assert (await habitat.run(RunArgs(command="true", tab="srv"))).index == 2


async def test_an_empty_command_and_a_missing_cwd_are_refused_and_open_no_tab(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    with pytest.raises(UsageError, match="command is empty"):
        await habitat.run(RunArgs(command="  "))
    with pytest.raises(UsageError, match=r"cwd 'nope' does not exist"):
        await habitat.run(RunArgs(command="true", cwd="nope"))
    assert (await habitat.scene()).tabs == []
    assert spawner.processes == []


async def test_input_to_a_run_not_started_interactive_is_refused(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    spawner.scripts["serve"] = Script(keep_running=True)
    await habitat.run(RunArgs(command="serve", background=True))
    with pytest.raises(UsageError, match="interactive=true"):
        await habitat.input(InputArgs(tab="main", text="x"))


async def test_input_reaches_an_interactive_run(habitat: Shell, spawner: FakeSpawner) -> None:
    spawner.scripts["read name"] = Script(keep_running=True)
    await habitat.run(RunArgs(command="read name", background=True, interactive=True))
    written = await habitat.input(InputArgs(tab="main", text="world\n", eof=True))
    assert (written.bytes_written, written.eof) == (6, True)
    assert spawner.last.stdin_received == b"world\n"


class _SlowKeeping(SpoolKeeping):
    """Holds each run between its row and its process until `release` is set (a keeper
    starting first on a short disk)."""

    def __init__(self, release: anyio.Event, *args: Any) -> None:
        super().__init__(*args)
        self._release = release

    async def pipe(self, run: RunRow) -> int | None:
        await self._release.wait()
        return None


async def test_input_sent_while_its_run_is_still_starting_waits_for_it(
    open_habitat: OpenHabitat, spawner: FakeSpawner
) -> None:
    # Between its row and its process a run may wait (a keeper starting first on a short
    # disk); a person's typing that arrives then is the run's, not a refusal.
    spawner.scripts["read name"] = Script(keep_running=True)
    release = anyio.Event()
    keeping = functools.partial(_SlowKeeping, release)
    written: list[int] = []
    with anyio.fail_after(5):
        async with open_habitat(keeping=keeping) as habitat, anyio.create_task_group() as tg:
            tg.start_soon(
                habitat.run, RunArgs(command="read name", background=True, interactive=True)
            )
            await eventually(lambda: habitat.runs.running("main") is not None)

            async def type_a_line() -> None:
                written.append(
                    (await habitat.input(InputArgs(tab="main", text="a\n"))).bytes_written
                )

            tg.start_soon(type_a_line)
            await anyio.wait_all_tasks_blocked()
            assert written == []  # it waits for the process, which does not exist yet
            release.set()
    assert written == [2]
    assert spawner.last.stdin_received == b"a\n"


# the cwd chain: tab cwd → project root → this process's cwd
async def test_a_new_tab_starts_in_the_project_root(
    habitat: Shell, spawner: FakeSpawner, project: Path
) -> None:
    result = await habitat.run(RunArgs(command="true"))
    assert spawner.last.cwd == project
    assert result.cwd == str(project)


async def test_without_a_project_a_new_tab_starts_in_this_process_cwd(
    open_habitat: OpenHabitat,
    spawner: FakeSpawner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    async with open_habitat(project_root=None) as habitat:
        await habitat.run(RunArgs(command="true"))
    assert spawner.last.cwd == here


async def test_cd_carries_to_the_next_command_of_its_tab_only(
    habitat: Shell, spawner: FakeSpawner, project: Path
) -> None:
    (project / "sub").mkdir()
    spawner.scripts["cd sub"] = Script(cd="sub")
    await habitat.run(RunArgs(command="cd sub", tab="a"))
    await habitat.run(RunArgs(command="true", tab="a"))
    assert spawner.last.cwd == project / "sub"
    await habitat.run(RunArgs(command="true", tab="b"))
    assert spawner.last.cwd == project


async def test_a_relative_cwd_is_taken_from_the_tab_cwd(
    habitat: Shell, spawner: FakeSpawner, project: Path
) -> None:
    (project / "sub" / "deeper").mkdir(parents=True)
    spawner.scripts["cd sub"] = Script(cd="sub")
    await habitat.run(RunArgs(command="cd sub"))
    await habitat.run(RunArgs(command="true", cwd="deeper"))
    assert spawner.last.cwd == project / "sub" / "deeper"


async def test_a_tab_whose_folder_was_removed_starts_in_the_project_root(
    habitat: Shell, spawner: FakeSpawner, project: Path
) -> None:
    (project / "gone").mkdir()
    spawner.scripts["cd gone"] = Script(cd="gone")
    await habitat.run(RunArgs(command="cd gone"))
    shutil.rmtree(project / "gone")
    await habitat.run(RunArgs(command="true"))
    assert spawner.last.cwd == project


async def test_a_killed_run_does_not_move_its_tab(
    habitat: Shell, spawner: FakeSpawner, project: Path
) -> None:
    (project / "sub").mkdir()
    spawner.scripts["cd sub; serve"] = Script(keep_running=True)
    await habitat.run(RunArgs(command="cd sub; serve", background=True))
    await habitat.kill(KillArgs(tab="main"))
    await habitat.run(RunArgs(command="true"))
    assert spawner.last.cwd == project


# env carry-over
async def test_a_new_tab_inherits_this_process_env_and_the_non_interactive_defaults(
    habitat: Shell, spawner: FakeSpawner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FROM_HOST", "1")
    await habitat.run(RunArgs(command="true"))
    env = spawner.last.env
    assert (env["FROM_HOST"], env["PAGER"], env["GIT_TERMINAL_PROMPT"]) == ("1", "cat", "0")
    assert env["HABITAT_RUN_ID"] == spawner.last.record.marker


async def test_exports_and_unsets_carry_to_the_next_command(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    spawner.scripts["export A=1 B=2"] = Script(export={"A": "1", "B": "2"})
    spawner.scripts["unset B"] = Script(unset=("B",))
    await habitat.run(RunArgs(command="export A=1 B=2"))
    await habitat.run(RunArgs(command="true"))
    assert (spawner.last.env["A"], spawner.last.env["B"]) == ("1", "2")
    await habitat.run(RunArgs(command="unset B"))
    await habitat.run(RunArgs(command="true"))
    assert "B" not in spawner.last.env
    assert spawner.last.env["A"] == "1"


async def test_a_per_command_env_reaches_that_command_only(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    await habitat.run(RunArgs(command="true", env={"ONCE": "yes"}))
    assert spawner.last.env["ONCE"] == "yes"
    await habitat.run(RunArgs(command="true"))
    assert "ONCE" not in spawner.last.env


async def test_a_per_command_variable_the_command_changed_is_carried(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    spawner.scripts["export ONCE=changed"] = Script(export={"ONCE": "changed"})
    await habitat.run(RunArgs(command="export ONCE=changed", env={"ONCE": "yes"}))
    await habitat.run(RunArgs(command="true"))
    assert spawner.last.env["ONCE"] == "changed"


async def test_tabs_keep_separate_environments(habitat: Shell, spawner: FakeSpawner) -> None:
    spawner.scripts["export A=1"] = Script(export={"A": "1"})
    await habitat.run(RunArgs(command="export A=1", tab="a"))
    await habitat.run(RunArgs(command="true", tab="b"))
    assert "A" not in spawner.last.env


# foreground runs
async def test_a_foreground_run_returns_its_exit_code_output_and_events(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    spawner.scripts["build"] = Script(output="ok\n", exit_code=3)
    seen: list[Event] = []
    habitat.bus.subscribe(seen.append)
    result = await habitat.run(RunArgs(command="build", tab="b"))
    assert (result.state, result.exit_code, result.output, result.index) == ("exited", 3, "ok\n", 1)
    assert [e.kind for e in seen] == ["shell.tab.opened", "shell.run.started", "shell.run.exited"]
    assert seen[-1].data["exit_code"] == 3


async def test_a_foreground_run_over_its_timeout_is_killed_and_says_so(
    habitat: Shell, spawner: FakeSpawner, clock: FakeClock
) -> None:
    spawner.scripts["hang"] = Script(output="started\n", keep_running=True)
    result = await advance_while(
        clock, 10, lambda: habitat.run(RunArgs(command="hang", timeout_seconds=10))
    )
    assert (result.state, result.timed_out, result.exit_code) == ("timed_out", True, None)
    assert result.output == "started\n"
    assert spawner.last.signals == [signal.SIGTERM]
    assert result.duration_s == 10.0


async def test_yield_after_returns_running_and_the_run_goes_on(
    habitat: Shell, spawner: FakeSpawner, clock: FakeClock
) -> None:
    spawner.scripts["slow"] = Script(output="start\n", keep_running=True)
    result = await advance_while(
        clock, 1, lambda: habitat.run(RunArgs(command="slow", yield_after_seconds=1))
    )
    assert (result.state, result.output) == ("running", "start\n")
    assert spawner.last.signals == []
    spawner.last.write("end\n")
    spawner.last.exit(0)
    waited = await habitat.wait(WaitArgs())
    assert (waited.reason, waited.exit_code, waited.output) == ("exited", 0, "start\nend\n")


async def test_a_foreground_run_reports_progress_with_its_last_line(
    habitat: Shell, spawner: FakeSpawner, clock: FakeClock
) -> None:
    spawner.scripts["work"] = Script(output="step 1\n\n", keep_running=True)
    seen: list[tuple[float, str]] = []

    async def progress(elapsed: float, line: str) -> None:
        seen.append((elapsed, line))

    await advance_while(
        clock, 0.6, lambda: habitat.run(RunArgs(command="work", timeout_seconds=0.6), progress)
    )
    assert seen == [(0.25, "step 1"), (0.5, "step 1")]


# rerun and kill
async def test_rerun_runs_an_entry_again_in_the_tab_current_cwd(
    habitat: Shell, spawner: FakeSpawner, project: Path
) -> None:
    (project / "sub").mkdir()
    spawner.scripts["echo first"] = Script(output="first\n")
    spawner.scripts["cd sub"] = Script(cd="sub")
    await habitat.run(RunArgs(command="echo first"))
    await habitat.run(RunArgs(command="cd sub"))
    again = await habitat.rerun(RerunArgs(index=1))
    assert (again.index, again.command, again.output) == (3, "echo first", "first\n")
    assert spawner.last.cwd == project / "sub"
    latest = await habitat.rerun(RerunArgs())
    assert (latest.index, latest.command) == (4, "echo first")


async def test_rerun_of_a_missing_entry_or_tab_is_refused(habitat: Shell) -> None:
    await habitat.run(RunArgs(command="true"))
    with pytest.raises(NotFoundError, match=r"tab 'main' has no run #7; see `history`"):
        await habitat.rerun(RerunArgs(index=7))
    with pytest.raises(NotFoundError, match=r"no tab 'ghost'; open tabs: main"):
        await habitat.rerun(RerunArgs(tab="ghost"))


async def test_kill_ends_the_running_command_and_records_it_killed(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    spawner.scripts["serve"] = Script(keep_running=True)
    await habitat.run(RunArgs(command="serve", tab="s", background=True))
    seen: list[Event] = []
    habitat.bus.subscribe(seen.append)
    result = await habitat.kill(KillArgs(tab="s"))
    assert (result.killed, result.pids, result.signal) == (True, [spawner.last.pid], "SIGTERM")
    row = (await habitat.history(HistoryArgs(tab="s"))).rows[-1]
    assert (row.state, row.exit_code) == ("killed", None)
    assert [(e.kind, e.data["signal"]) for e in seen] == [("shell.run.killed", signal.SIGTERM)]
    again = await habitat.kill(KillArgs(tab="s"))
    assert (again.killed, again.index) == (False, None)


async def test_kill_with_another_signal_delivers_that_signal(
    habitat: Shell, spawner: FakeSpawner
) -> None:
    spawner.scripts["serve"] = Script(keep_running=True)
    await habitat.run(RunArgs(command="serve", tab="s", background=True))
    result = await habitat.kill(KillArgs(tab="s", signal="INT"))
    assert (result.killed, result.signal) == (True, "SIGINT")
    assert spawner.last.signals == [signal.SIGINT]
