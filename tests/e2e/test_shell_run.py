from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from agent_habitat.errors import BusyTabError, NotFoundError, UsageError
from agent_habitat.habitat import Habitat
from agent_habitat.shell import Shell
from agent_habitat.shell.models import (
    HistoryArgs,
    LastArgs,
    RerunArgs,
    RunArgs,
    WaitArgs,
    WhichArgs,
)
from agent_habitat.testing import EventRecorder
from shell_waits import await_file

pytestmark = pytest.mark.anyio


async def test_foreground_run_returns_exit_code_and_output(habitat: Shell) -> None:
    result = await habitat.run(RunArgs(command="echo out; echo err >&2; exit 3"))
    assert (result.state, result.exit_code) == ("exited", 3)
    assert result.output == "out\nerr\n"
    assert Path(result.spool).read_bytes() == b"out\nerr\n"


async def test_default_cwd_is_the_project_root(habitat: Shell, project: Path) -> None:
    result = await habitat.run(RunArgs(command="pwd"))
    assert result.output.strip() == str(project)


async def test_cd_and_export_carry_to_the_next_command(habitat: Shell, tmp_path: Path) -> None:
    await habitat.run(RunArgs(command=f"cd {tmp_path} && export GREETING='a b\nc'"))
    result = await habitat.run(RunArgs(command='pwd; printf "%s|" "$GREETING"'))
    assert result.output == f"{tmp_path}\na b\nc|"


async def test_unset_carries_too(habitat: Shell) -> None:
    await habitat.run(RunArgs(command="export GONE=1"))
    await habitat.run(RunArgs(command="unset GONE"))
    result = await habitat.run(RunArgs(command='echo "[${GONE-unset}]"'))
    assert result.output == "[unset]\n"


async def test_per_command_env_does_not_leak_into_the_tab(habitat: Shell) -> None:
    first = await habitat.run(RunArgs(command="echo $ONCE", env={"ONCE": "yes"}))
    second = await habitat.run(RunArgs(command='echo "[$ONCE]"'))
    assert (first.output, second.output) == ("yes\n", "[]\n")


async def test_tabs_keep_separate_cwd(habitat: Shell, tmp_path: Path) -> None:
    await habitat.run(RunArgs(command=f"cd {tmp_path}", tab="a"))
    b = await habitat.run(RunArgs(command="pwd", tab="b"))
    a = await habitat.run(RunArgs(command="pwd", tab="a"))
    assert a.output.strip() == str(tmp_path)
    assert b.output.strip() != str(tmp_path)


async def test_sh_tab_carries_cwd_and_env(habitat: Shell, tmp_path: Path) -> None:
    await habitat.run(RunArgs(command=f'cd {tmp_path}; export Q="it\'s"', tab="p", shell="sh"))
    result = await habitat.run(RunArgs(command='pwd; echo "$Q"', tab="p"))
    assert result.output == f"{tmp_path}\nit's\n"


async def test_non_interactive_defaults(habitat: Shell) -> None:
    result = await habitat.run(RunArgs(command="echo $PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT"))
    assert result.output == "cat cat 0\n"


async def test_cat_without_arguments_returns_at_once(habitat: Shell) -> None:
    with anyio.fail_after(30):
        result = await habitat.run(RunArgs(command="cat; read x; echo after"))
    assert result.state == "exited"
    assert result.output == "after\n"


async def test_output_for_the_agent_is_cleaned_but_the_spool_is_raw(
    habitat: Shell,
) -> None:
    command = r"printf '\033[32mgreen\033[0m\n10%%\r55%%\r100%%\n'"
    result = await habitat.run(RunArgs(command=command))
    assert result.output == "green\n100%\n"
    assert b"\x1b[32m" in Path(result.spool).read_bytes()


async def test_output_is_capped_with_head_tail_and_omitted_count(habitat: Shell) -> None:
    result = await habitat.run(RunArgs(command="seq 1 100000"))
    assert result.output.startswith("1\n2\n")
    assert result.output.endswith("99999\n100000\n")
    assert result.omitted_bytes > 500_000
    assert result.output_bytes == Path(result.spool).stat().st_size


async def test_timeout_kills_the_tree_and_says_so(habitat: Shell) -> None:
    with anyio.fail_after(10):
        result = await habitat.run(
            RunArgs(command="sleep 30 & sleep 31; echo never", timeout_seconds=0.3)
        )
    assert result.state == "timed_out"
    assert result.timed_out
    assert result.exit_code is None
    assert "never" not in result.output


async def test_yield_after_returns_running_without_killing(habitat: Shell) -> None:
    result = await habitat.run(
        RunArgs(
            command="echo start; read -t 2 x < /dev/zero; sleep 0.5; echo end",
            yield_after_seconds=0.1,
        )
    )
    assert result.state == "running"
    with anyio.fail_after(10):
        waited = await habitat.wait(WaitArgs(timeout_seconds=10))
    assert (waited.reason, waited.exit_code) == ("exited", 0)
    assert "end" in waited.output


async def test_background_returns_at_once_and_busy_tab_refuses_a_second_run(
    habitat: Shell,
) -> None:
    started = await habitat.run(RunArgs(command="echo go; sleep 30", tab="srv", background=True))
    assert started.state == "running"
    assert started.pid is not None
    with pytest.raises(BusyTabError, match="sleep 30"):
        await habitat.run(RunArgs(command="echo second", tab="srv"))
    other = await habitat.run(RunArgs(command="echo other", tab="free"))
    assert other.exit_code == 0


async def test_wait_until_regex_sees_output_printed_before_the_wait(
    habitat: Shell,
) -> None:
    await habitat.run(RunArgs(command="echo listening on 8080; sleep 30", tab="s", background=True))
    with anyio.fail_after(10):
        result = await habitat.wait(
            WaitArgs(tab="s", until=r"listening on (\d+)", timeout_seconds=10)
        )
    assert (result.reason, result.match) == ("matched", "listening on 8080")


async def test_wait_times_out_while_the_run_goes_on(habitat: Shell) -> None:
    await habitat.run(RunArgs(command="sleep 30", tab="s", background=True))
    result = await habitat.wait(WaitArgs(tab="s", until="never", timeout_seconds=0.2))
    assert (result.reason, result.state) == ("timeout", "running")


async def test_wait_reports_progress_with_the_last_line(habitat: Shell, tmp_path: Path) -> None:
    heard = tmp_path / "heard"
    command = f"echo warming; {await_file(heard)}; echo done; sleep 30"
    await habitat.run(RunArgs(command=command, tab="s", background=True))
    seen: list[tuple[float, str]] = []

    async def progress(elapsed: float, line: str) -> None:
        seen.append((elapsed, line))
        if line == "warming":
            heard.touch()

    result = await habitat.wait(WaitArgs(tab="s", until="done", timeout_seconds=30), progress)
    assert result.reason == "matched"
    assert "warming" in [line for _, line in seen]
    assert [e for e, _ in seen] == sorted(e for e, _ in seen)


async def test_last_while_running_gives_live_output_and_a_cursor(habitat: Shell) -> None:
    await habitat.run(
        RunArgs(command="echo one; read -t 30 x < /dev/zero; sleep 30", tab="s", background=True)
    )
    await habitat.wait(WaitArgs(tab="s", until="one", timeout_seconds=10))
    live = await habitat.last(LastArgs(tab="s"))
    assert live.running
    assert live.output == "one\n"
    again = await habitat.last(LastArgs(tab="s", since=live.cursor))
    assert again.output == ""


async def test_history_rerun_and_which(habitat: Shell) -> None:
    await habitat.run(RunArgs(command="echo first"))
    await habitat.run(RunArgs(command="echo second"))
    rerun = await habitat.rerun(RerunArgs(index=1))
    assert (rerun.index, rerun.output) == (3, "first\n")
    rows = (await habitat.history(HistoryArgs())).rows
    assert [r.command for r in rows] == ["echo first", "echo second", "echo first"]
    which = await habitat.which(WhichArgs())
    assert which.shell in ("bash", "sh", "zsh")
    assert which.state == "idle"


async def test_history_is_capped_per_tab(project: Path) -> None:
    from agent_habitat.config import ShellConfig
    from agent_habitat.workspace import Workspace

    config = ShellConfig(history_rows=3)
    async with Habitat.open(Workspace.for_project(project), config=config) as opened:
        habitat = opened.shell
        for n in range(6):
            await habitat.run(RunArgs(command=f"echo {n}"))
        rows = (await habitat.history(HistoryArgs(limit=100))).rows
    assert [r.index for r in rows] == [4, 5, 6]


async def test_the_ninth_tab_is_refused_naming_the_open_tabs(habitat: Shell) -> None:
    for n in range(8):
        await habitat.run(RunArgs(command="true", tab=f"t{n}"))
    with pytest.raises(UsageError, match=r"tab limit reached \(8 open: t0, .*t7\).*close"):
        await habitat.run(RunArgs(command="true", tab="t8"))
    assert len((await habitat.scene()).tabs) == 8


async def test_bad_input_is_a_clear_error_and_state_stays_consistent(
    habitat: Shell,
) -> None:
    with pytest.raises(UsageError, match="command is empty"):
        await habitat.run(RunArgs(command="   "))
    with pytest.raises(UsageError, match="does not exist"):
        await habitat.run(RunArgs(command="true", cwd="/no/such/dir"))
    with pytest.raises(UsageError, match=r"unknown or missing shell 'tcsh-x'.*available here"):
        await habitat.run(RunArgs(command="true", shell="tcsh-x"))
    with pytest.raises(NotFoundError, match="no tab 'ghost'"):
        await habitat.last(LastArgs(tab="ghost"))
    with pytest.raises(UsageError, match="bad regex"):
        await habitat.last(LastArgs(grep="("))
    assert (await habitat.scene()).tabs == []
    ok = await habitat.run(RunArgs(command="echo fine"))
    assert ok.index == 1


async def test_events_are_published_for_tabs_and_runs(habitat: Shell) -> None:
    recorder = EventRecorder(habitat.bus)
    seen = recorder.events
    await habitat.run(RunArgs(command="exit 1", tab="ev"))
    # A quick run's end is written after its answer (EndRecorder.later), in the lull.
    await recorder.wait_for("shell.run.exited", where=lambda e: e.tab == "ev")
    kinds = [e.kind for e in seen]
    assert kinds == ["shell.tab.opened", "shell.run.started", "shell.run.exited"]
    assert seen[-1].data["exit_code"] == 1
    assert seen[-1].tab == "ev"


async def test_interactive_run_reads_input(habitat: Shell) -> None:
    from agent_habitat.shell.models import InputArgs

    await habitat.run(
        RunArgs(command="read name; echo hello $name", tab="i", interactive=True, background=True)
    )
    written = await habitat.input(InputArgs(tab="i", text="world\n", eof=True))
    assert written.bytes_written == 6
    result = await habitat.wait(WaitArgs(tab="i", timeout_seconds=10))
    assert (result.reason, result.output) == ("exited", "hello world\n")


async def test_input_to_a_non_interactive_run_is_refused(habitat: Shell) -> None:
    from agent_habitat.shell.models import InputArgs

    await habitat.run(RunArgs(command="sleep 30", tab="n", background=True))
    with pytest.raises(UsageError, match="interactive=true"):
        await habitat.input(InputArgs(tab="n", text="x"))


async def test_cancelling_a_foreground_run_kills_it_and_records_cancelled(
    habitat: Shell,
) -> None:
    with anyio.move_on_after(0.3):
        await habitat.run(RunArgs(command="sleep 30", tab="c"))
    rows = (await habitat.history(HistoryArgs(tab="c"))).rows
    assert rows[-1].state == "cancelled"
    assert (await habitat.scene()).tabs[0].state == "idle"


def test_state_lives_outside_the_project(project: Path) -> None:
    from agent_habitat.workspace import Workspace

    state = Workspace.for_project(project).state_dir
    assert project not in state.parents
    assert str(state).startswith(os.environ["HABITAT_HOME"])


async def test_background_exit_is_published_and_can_be_awaited(habitat: Shell) -> None:
    from agent_habitat.testing import EventRecorder

    recorder = EventRecorder(habitat.bus)
    await habitat.run(RunArgs(command="exit 4", tab="bgx", background=True))
    exited = await recorder.wait_for("shell.run.exited", where=lambda e: e.tab == "bgx")
    assert exited.data["exit_code"] == 4
    recorder.unsubscribe()


_BUILD = (
    'for i in $(seq 1 4000); do echo "[$i/4000] compiling module_$i.c ... ok"; '
    "[ $i = 2000 ] && echo \"module_2000.c:17:5: error: expected ';'\"; done; "
    "echo 'build failed: 1 error'; exit 1"
)


async def test_a_failed_run_carries_the_error_lines_the_cap_left_out(
    habitat: Shell,
) -> None:
    result = await habitat.run(RunArgs(command=_BUILD))
    assert result.exit_code == 1
    assert result.omitted_bytes > 0
    assert "module_2000.c:17:5" not in result.output
    assert result.error_lines == ["module_2000.c:17:5: error: expected ';'"]
    last = await habitat.last(LastArgs())
    assert last.error_lines == result.error_lines


async def test_a_passing_run_carries_no_error_lines(habitat: Shell) -> None:
    result = await habitat.run(RunArgs(command=_BUILD.replace("exit 1", "exit 0")))
    assert result.omitted_bytes > 0
    assert result.error_lines == []


async def test_a_quick_run_is_announced_with_its_end_in_order(habitat: Shell) -> None:
    recorder = EventRecorder(habitat.bus)
    events = recorder.events
    first = await habitat.run(RunArgs(command="true", tab="fresh"))
    second = await habitat.run(RunArgs(command="exit 4", tab="fresh"))
    await recorder.wait_for("shell.run.exited", where=lambda e: e.data.get("index") == second.index)
    kinds = [(e.kind, e.data.get("index")) for e in events if e.tab == "fresh"]
    assert kinds == [
        ("shell.tab.opened", None),
        ("shell.run.started", first.index),
        ("shell.run.exited", first.index),
        ("shell.run.started", second.index),
        ("shell.run.exited", second.index),
    ]
    started = [e for e in events if e.kind == "shell.run.started"]
    assert [e.data["pid"] for e in started] == [first.pid, second.pid]
    assert [e.id for e in events] == sorted(e.id for e in events)  # journaled in order


async def test_a_foreground_run_is_announced_while_it_still_runs(
    habitat: Shell, tmp_path: Path
) -> None:
    recorder = EventRecorder(habitat.bus)
    go = tmp_path / "go"
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            habitat.run, RunArgs(command=f"while [ ! -e {go} ]; do sleep 0.01; done; echo done")
        )
        started = await recorder.wait_for("shell.run.started", bound_seconds=30)
        assert "shell.run.exited" not in recorder.kinds()
        go.touch()
        ended = await recorder.wait_for("shell.run.exited", bound_seconds=30)
    assert ended.data["index"] == started.data["index"]
