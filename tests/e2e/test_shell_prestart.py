"""A tab's next run starts in a wrapper started as its last run ended (`shell.prestarts`),
and records everything a run started cold records."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from agent_habitat.config import ShellConfig
from agent_habitat.events import Event
from agent_habitat.habitat import Habitat
from agent_habitat.proc import cgroup
from agent_habitat.shell import Shell
from agent_habitat.shell.models import HistoryArgs, KillArgs, RunArgs, WaitArgs
from agent_habitat.testing import eventually
from agent_habitat.workspace import Workspace

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _open(project: Path) -> AsyncIterator[Shell]:
    config = ShellConfig(kill_grace_seconds=0.5)
    async with Habitat.open(Workspace.for_project(project), project=project, config=config) as h:
        yield h.shell


async def _prestarted(shell: Shell, tab: str = "main") -> int:
    """Run two commands in `tab`, then wait for its next wrapper; its pid. (The first run's
    own wrapper starts before the tab carries an environment of its own, so it does not fit
    the next run, which starts cold or waits for the one started after it.)"""
    for _ in range(2):
        await shell.run(RunArgs(command="true", tab=tab))
    await eventually(lambda: shell.prestarts.pid(tab) is not None, within=30)
    pid = shell.prestarts.pid(tab)
    assert pid is not None
    return pid


def _marker(pid: int) -> str:
    """The run marker a prestarted wrapper waits with (`HABITAT_RUN_ID`)."""
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return next(
        v.decode() for k, _, v in (e.partition(b"=") for e in environ) if k == b"HABITAT_RUN_ID"
    )


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


async def test_a_prestarted_run_records_what_a_cold_one_does(habitat: Shell, project: Path) -> None:
    (project / "sub").mkdir()
    events: list[Event] = []
    habitat.bus.subscribe(events.append)
    pid = await _prestarted(habitat)
    result = await habitat.run(RunArgs(command="cd sub && export CARRIED='a b'; echo out; exit 3"))
    assert (result.pid, result.state, result.exit_code) == (pid, "exited", 3)
    assert result.output == "out\n"
    assert Path(result.spool).read_bytes() == b"out\n"
    row = habitat.store.by_index("main", result.index)
    assert row is not None
    assert row.create_time is not None
    assert row.create_time < row.started_at  # started before its run: prestarted
    following = await habitat.run(RunArgs(command='pwd; echo "$CARRIED"; echo "$0"'))
    assert following.output == f"{project / 'sub'}\na b\nbash\n"
    rows = (await habitat.history(HistoryArgs())).rows
    assert [(r.state, r.exit_code) for r in rows][-3:] == [
        ("exited", 0),
        ("exited", 3),
        ("exited", 0),
    ]
    ended = [e for e in events if e.kind == "shell.run.exited"]
    assert [e.data["exit_code"] for e in ended][-3:] == [0, 3, 0]


async def test_a_run_that_does_not_fit_it_starts_cold_and_closes_it(habitat: Shell) -> None:
    pid = await _prestarted(habitat)
    result = await habitat.run(RunArgs(command='echo "$ONCE"', env={"ONCE": "yes"}))
    assert (result.output, result.exit_code) == ("yes\n", 0)
    assert result.pid != pid
    await eventually(lambda: not _alive(pid))


async def test_the_next_wrapper_starts_while_a_run_runs(habitat: Shell) -> None:
    first = await _prestarted(habitat)
    running = await habitat.run(RunArgs(command="sleep 3055", background=True))
    assert (running.pid, running.state) == (first, "running")
    await eventually(lambda: habitat.prestarts.pid("main") is not None, within=30)
    assert habitat.prestarts.pid("main") != first
    await habitat.kill(KillArgs(tab="main"))


async def test_a_run_that_moves_its_tab_leaves_a_next_wrapper_where_it_moved(
    habitat: Shell, project: Path
) -> None:
    (project / "sub").mkdir()
    await _prestarted(habitat)
    moved = await habitat.run(RunArgs(command="cd sub"))

    def waits_in_sub() -> bool:
        pid = habitat.prestarts.pid("main")
        return pid is not None and pid != moved.pid and _cwd(pid) == project / "sub"

    await eventually(waits_in_sub, within=30)
    pid = habitat.prestarts.pid("main")
    following = await habitat.run(RunArgs(command="pwd"))
    assert (following.pid, following.output) == (pid, f"{project / 'sub'}\n")


def _cwd(pid: int) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None


async def test_what_a_prestarted_run_left_running_is_reported_and_killed(
    habitat: Shell,
) -> None:
    await _prestarted(habitat)
    result = await habitat.run(RunArgs(command="sleep 3053 >/dev/null 2>&1 & echo $!"))
    left = int(result.output)
    assert [p.pid for p in result.left_running] == [left]
    killed = await habitat.kill(KillArgs(tab="main"))
    assert left in killed.pids
    await eventually(lambda: not _alive(left))


async def test_a_prestarted_run_that_times_out_loses_its_whole_tree(habitat: Shell) -> None:
    pid = await _prestarted(habitat)
    result = await habitat.run(
        # 2 s: time for the shell to start the child and print its pid, under load too.
        RunArgs(command="sleep 3053 & echo $!; sleep 3054", timeout_seconds=2)
    )
    assert (result.pid, result.state) == (pid, "timed_out")
    child = int(result.output.split()[0])
    await eventually(lambda: not _alive(child) and not _alive(pid))


async def test_a_closing_habitat_ends_its_prestarted_wrappers(project: Path) -> None:
    async with _open(project) as shell:
        pid = await _prestarted(shell)
        marker = _marker(pid)
    await eventually(lambda: not _alive(pid))
    if cgroup.tracking() == "cgroup":
        await eventually(lambda: cgroup.group_pids(marker) is None)


@pytest.mark.skipif(cgroup.tracking() != "cgroup", reason="this machine gives no cgroup")
async def test_the_empty_groups_of_runs_that_ended_alone_go_by_the_close(project: Path) -> None:
    async with _open(project) as shell:
        await _prestarted(shell)
        ran = [await shell.run(RunArgs(command="true")) for _ in range(3)]
        rows = [shell.store.by_index("main", r.index) for r in ran]
        markers = [row.marker for row in rows if row is not None and row.marker]
        assert len(markers) == 3
    assert [cgroup.group_pids(m) for m in markers] == [None, None, None]


async def test_a_prestarted_background_run_is_adopted_by_the_next_habitat(
    project: Path, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    async with _open(project) as first:
        pid = await _prestarted(first, "bg")
        started = await first.run(
            RunArgs(
                command=f"while [ ! -e {go} ]; do sleep 0.02; done; exit 4",
                tab="bg",
                background=True,
            )
        )
        assert started.pid == pid
    async with _open(project) as second:
        assert (await second.scene()).tabs[0].state == "running"
        go.touch()
        waited = await second.wait(WaitArgs(tab="bg", timeout_seconds=20))
        assert (waited.reason, waited.exit_code) == ("exited", 4)
    assert not _alive(pid)


@pytest.mark.parametrize(
    "command",
    [
        "printf '%s|' \"  lead\" 'back\\slash' \"$((6 * 7))\"; printf '\\n%s\\n' x\ty",
        "cat <<'EOF'\nline one\n  line two\\n\nEOF",
        "echo " + "x" * 600,  # longer than a wrapper reads from its stdin: from `cmd`
    ],
    ids=["quoting", "multi-line", "long"],
)
async def test_a_prestarted_run_runs_its_command_exactly_as_typed(
    habitat: Shell, command: str
) -> None:
    pid = await _prestarted(habitat)
    cold = await habitat.run(RunArgs(command=command, tab="cold", shell="sh"))
    result = await habitat.run(RunArgs(command=command))
    assert (result.pid, result.exit_code) == (pid, 0)
    assert result.output == cold.output
    assert (Path(result.spool).parent / "cmd").exists() == (len(command) > 512)


def _ahead(shell: Shell) -> list[Path]:
    """The run folders made ahead for the prestarted wrappers (`shell.prestarts`)."""
    return sorted(shell.workspace.spool_dir.glob("next-*"))


async def test_a_prestarted_run_takes_the_folder_made_ahead_with_its_files(
    habitat: Shell,
) -> None:
    pid = await _prestarted(habitat)
    spool = habitat.workspace.spool_dir
    made = spool / f"next-{os.getpid()}-{_marker(pid)}"
    assert made.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in made.iterdir()) == ["output", "output.hole.tmp", "state"]
    assert {(made / n).stat().st_mode & 0o777 for n in ("output", "state")} == {0o600}
    inode = made.stat().st_ino
    result = await habitat.run(RunArgs(command="echo out; exit 2"))
    assert (result.pid, result.output, result.exit_code) == (pid, "out\n", 2)
    row = habitat.store.by_index("main", result.index)
    assert row is not None
    assert Path(result.spool).parent == row.run_dir == spool / f"run-{row.id}"
    assert (made.exists(), row.run_dir.stat().st_ino) == (False, inode)  # renamed
    # What the wrapper recorded goes once the end is in the database: no rewrite.
    await eventually(lambda: not (row.run_dir / "state").exists())
    assert not (row.run_dir / "state.lean").exists()
    assert row.ended_at is not None
    assert row.ended_at >= row.started_at


async def test_a_run_whose_folder_made_ahead_is_gone_makes_its_own(habitat: Shell) -> None:
    pid = await _prestarted(habitat)
    for folder in _ahead(habitat):
        shutil.rmtree(folder)
    result = await habitat.run(RunArgs(command="echo still"))
    assert (result.pid, result.output, result.exit_code) == (pid, "still\n", 0)


async def test_the_folders_made_ahead_go_with_their_habitat_or_after_it(project: Path) -> None:
    async with _open(project) as shell:
        await _prestarted(shell)
        await eventually(lambda: len(_ahead(shell)) == 2, within=30)
        spool = shell.workspace.spool_dir
    assert not list(spool.glob("next-*"))  # its close removed them
    gone = spool / f"next-{_reaped_pid()}-run-p00"
    live = spool / f"next-{os.getpid()}-run-p01"  # another habitat process, still running
    for folder in (gone, live):
        folder.mkdir()
    async with _open(project):
        assert (gone.exists(), live.exists()) == (False, True)


def _reaped_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


async def test_a_dump_whose_end_is_not_recorded_is_rewritten_not_removed(habitat: Shell) -> None:
    running = await habitat.run(RunArgs(command="sleep 3056", background=True))
    row = habitat.store.by_index("main", running.index)
    assert row is not None
    row.files.state.write_bytes(b'0\0/some/where\0declare -x FOO="bar"\n')
    await habitat.runs._forget_dump(row)  # as the lull does after an end it failed to record
    assert not row.files.state.exists()
    assert row.files.read_state() is not None  # the next habitat still reads it
    assert row.files.lean_state.exists()
    await habitat.kill(KillArgs(tab="main"))
