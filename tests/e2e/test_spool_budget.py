"""A run's output stays within its spool budget, and the workspace's within its own: the
head and the tail are kept, the middle counted exactly, with nobody watching."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psutil
import pytest

from agent_habitat.config import ShellConfig
from agent_habitat.errors import HabitatError
from agent_habitat.habitat import Habitat
from agent_habitat.proc import kill_tree, members
from agent_habitat.proc.keepers import keeper_alive
from agent_habitat.proc.spool import Spool
from agent_habitat.proc.spool_keeper import FLOOR_BYTES, REASON_RUN
from agent_habitat.shell import Shell
from agent_habitat.shell.models import (
    HistoryArgs,
    InputArgs,
    KillArgs,
    LastArgs,
    RunArgs,
    WaitArgs,
)
from agent_habitat.testing import eventually
from agent_habitat.workspace import Workspace
from small_disks import fill, tmpfs

pytestmark = pytest.mark.anyio

RUN_BUDGET = 4 * 1024**2
# Whole blocks at both cuts, and the part of a block not yet punched.
SLACK = 64 * 1024
WRITTEN = 200_000_000


@pytest.fixture
def shell_config() -> ShellConfig:
    return ShellConfig(
        kill_grace_seconds=0.5,
        spool_run_budget_bytes=RUN_BUDGET,
        spool_workspace_budget_bytes=12 * 1024**2,
    )


def on_disk(path: Path) -> int:
    return os.stat(path).st_blocks * 512


def spool_usage(habitat: Shell) -> int:
    return sum(on_disk(p) for p in habitat.workspace.spool_dir.glob("run-*/output"))


async def test_a_loud_run_keeps_its_head_an_exact_omitted_count_and_its_tail(
    habitat: Shell,
) -> None:
    command = f"echo FIRST; yes | head -c {WRITTEN}; echo LAST"
    result = await habitat.run(RunArgs(command=command, tab="loud"))
    assert result.exit_code == 0
    assert result.output_bytes == len("FIRST\n") + WRITTEN + len("LAST\n")
    output = Path(result.spool)
    # The keeper's last cut comes once the last writer closed the file.
    await eventually(lambda: on_disk(output) <= RUN_BUDGET + SLACK, within=30)

    last = await habitat.last(LastArgs(tab="loud"))
    assert last.output.startswith("FIRST\ny\n")
    assert last.output.endswith("y\nLAST\n")
    # The result shows 16 KiB: some of what it omits is in the spool, the rest was freed.
    marker = re.search(
        r"\n… \[(\d+) bytes omitted; (\d+) of them not kept: (.+?), the rest in the spool\] …\n",
        last.output,
    )
    assert marker is not None, last.output[:200]
    hole = Spool(output).hole()
    assert hole is not None
    assert (int(marker.group(1)), int(marker.group(2)), marker.group(3)) == (
        last.omitted_bytes,
        hole.length,
        REASON_RUN,
    )
    assert on_disk(output) <= last.output_bytes - hole.length + SLACK
    shown = last.output.replace(marker.group(0), "")
    assert len(shown.encode()) + last.omitted_bytes == last.output_bytes

    head = await habitat.last(LastArgs(tab="loud", head_lines=1))
    tail = await habitat.last(LastArgs(tab="loud", tail_lines=1))
    assert (head.output, tail.output) == ("FIRST\n", "LAST\n")
    assert (head.omitted_bytes, tail.omitted_bytes) == (
        last.output_bytes - len("FIRST\n"),
        last.output_bytes - len("LAST\n"),
    )


async def test_a_background_writer_stays_within_budget_while_it_runs(
    habitat: Shell,
) -> None:
    await habitat.run(RunArgs(command="echo FIRST; exec yes", tab="live", background=True))
    run = habitat.store.by_index("live", None)
    assert run is not None
    output = run.files.output
    # Still writing at full speed, long past its budget, and the disk holds about the budget
    # (how far the keeper lags depends on the machine's load: looked at until it is seen).
    await eventually(
        lambda: Spool(output).size() > 20 * RUN_BUDGET and on_disk(output) <= 2 * RUN_BUDGET,
        within=60,
    )
    last = await habitat.last(LastArgs(tab="live", tail_lines=3))
    assert last.running
    assert last.output == "y\ny\ny\n"
    head = await habitat.last(LastArgs(tab="live", head_lines=1))
    assert head.output == "FIRST\n"


async def test_the_workspace_budget_holds_across_several_runs(habitat: Shell) -> None:
    budget = habitat.config.spool_workspace_budget_bytes
    for tab in ("a", "b", "c", "d", "e"):
        result = await habitat.run(RunArgs(command=f"yes {tab} | head -c 30000000", tab=tab))
        assert result.exit_code == 0
    await eventually(lambda: spool_usage(habitat) <= budget + 5 * SLACK, within=30)
    for tab in ("a", "e"):
        last = await habitat.last(LastArgs(tab=tab, tail_lines=1))
        assert last.output == f"{tab}\n"
        assert last.output_bytes == 30_000_000
        assert on_disk(Path(last.spool)) >= FLOOR_BYTES // 2


@pytest.fixture
def tiny_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """HABITAT_HOME on a 16 MiB tmpfs."""
    with tmpfs(tmp_path / "tiny", "16m") as mount:
        monkeypatch.setenv("HABITAT_HOME", str(mount / "home"))
        yield mount


@pytest.fixture
async def tiny_habitat(tiny_disk: Path, project: Path) -> AsyncIterator[Shell]:
    # The default budgets (256 MiB a run) are far above what this disk holds.
    config = ShellConfig(kill_grace_seconds=0.5)
    async with Habitat.open(Workspace.for_project(project), project=project, config=config) as h:
        yield h.shell
        for run in h.shell.store.running():
            if run.record is not None and members(run.record):
                await kill_tree(run.record, grace=0.2)
        # The habitat writes its state on close: let the keepers' last cuts free the disk
        # first (bounded), so a test that filled it does not fail its teardown too.
        with contextlib.suppress(TimeoutError):
            await eventually(lambda: shutil.disk_usage(tiny_disk).free > 2 << 20, within=30)


async def test_a_short_disk_cuts_the_output_and_the_run_goes_on(
    tiny_habitat: Shell,
) -> None:
    result = await tiny_habitat.run(
        RunArgs(command="echo FIRST; yes | head -c 100000000; echo LAST", tab="big")
    )
    assert (result.exit_code, result.output_bytes) == (0, 6 + 100_000_000 + 5)
    last = await tiny_habitat.last(LastArgs(tab="big"))
    assert "not kept: the disk holding the spool was nearly full" in last.output
    assert last.output.startswith("FIRST\n")
    assert last.output.endswith("LAST\n")
    scene = await tiny_habitat.scene()
    assert [t.name for t in scene.tabs] == ["big"]


def _blocked_writing_a_pipe(argv: list[str]) -> bool:
    for process in psutil.process_iter(["cmdline"]):
        if process.info["cmdline"] == argv:
            with contextlib.suppress(OSError):
                return "pipe_write" in Path(f"/proc/{process.pid}/wchan").read_text()
    return False


async def test_a_writer_waits_for_a_stopped_keeper_on_a_short_disk_instead_of_failing(
    tiny_habitat: Shell, tiny_disk: Path
) -> None:
    # The keeper kept off a core as long as it takes (stopped): a writer that wrote the
    # spool itself would fill the 16 MiB disk and fail with ENOSPC; through the keeper's
    # pipe it waits, and goes on once the keeper runs again, every byte counted.
    await tiny_habitat.run(
        RunArgs(
            command="read go; yes | head -c 100000000; echo LAST",
            tab="big",
            background=True,
            interactive=True,
        )
    )
    run = tiny_habitat.store.by_index("big", None)
    assert run is not None
    [keeper] = [
        p
        for p in psutil.process_iter(["cmdline"])
        if str(run.files.output) in (p.info["cmdline"] or [])
    ]
    keeper.suspend()
    try:
        await tiny_habitat.input(InputArgs(tab="big", text="go\n", eof=True))
        await eventually(lambda: _blocked_writing_a_pipe(["head", "-c", "100000000"]), within=30)
        assert shutil.disk_usage(tiny_disk).free > 4 << 20
    finally:
        keeper.resume()
    result = await tiny_habitat.wait(WaitArgs(tab="big", timeout_seconds=120))
    assert (result.reason, result.exit_code) == ("exited", 0)
    last = await tiny_habitat.last(LastArgs(tab="big"))
    assert last.output_bytes == 100_000_000 + 5
    assert last.output.endswith("y\nLAST\n")
    assert "not kept: the disk holding the spool was nearly full" in last.output


async def test_a_full_disk_fails_the_run_with_a_clear_message_and_the_habitat_serves_on(
    tiny_habitat: Shell, tiny_disk: Path
) -> None:
    await tiny_habitat.run(RunArgs(command="echo before", tab="t"))
    # Its end is written after its answer: by this read, before the disk fills (see
    # test_an_end_the_full_disk_kept_from_the_database_says_so for the disk filling first).
    await tiny_habitat.history(HistoryArgs(tab="t"))
    filler = fill(tiny_disk)
    try:
        with pytest.raises(HabitatError, match="is full") as failed:
            await tiny_habitat.run(RunArgs(command="echo hi", tab="t"))
        assert "free space there" in str(failed.value)
        scene = await tiny_habitat.scene()
        assert [(t.name, t.state, t.preview) for t in scene.tabs] == [("t", "idle", "before\n")]
    finally:
        filler.unlink()
    again = await tiny_habitat.run(RunArgs(command="echo after", tab="t"))
    assert (again.exit_code, again.output) == (0, "after\n")


async def test_an_end_the_full_disk_kept_from_the_database_says_so(
    tiny_habitat: Shell, tiny_disk: Path
) -> None:
    await tiny_habitat.run(RunArgs(command="echo before; exit 3", tab="t"))
    filler = fill(tiny_disk)  # before its end, written after its answer, is
    try:
        with pytest.raises(HabitatError, match="cannot record the end of the run") as failed:
            await tiny_habitat.history(HistoryArgs(tab="t"))
        assert "free space there" in str(failed.value)
    finally:
        filler.unlink()
    # Its wrapper's record stayed: the end is recorded from it once there is room.
    rows = (await tiny_habitat.history(HistoryArgs(tab="t"))).rows
    assert [(r.state, r.exit_code) for r in rows] == [("exited", 3)]
    again = await tiny_habitat.run(RunArgs(command="echo after", tab="t"))
    assert (again.exit_code, again.output) == (0, "after\n")


async def test_a_habitat_adopting_a_run_whose_keeper_is_gone_starts_one(
    project: Path, shell_config: ShellConfig
) -> None:
    workspace = Workspace.for_project(project)
    async with Habitat.open(workspace, project=project, config=shell_config) as first:
        await first.shell.run(RunArgs(command="exec yes", tab="w", background=True))
        run = first.shell.store.by_index("w", None)
    assert run is not None
    assert run.record is not None
    output = run.files.output
    try:
        await eventually(lambda: keeper_alive(output), within=30)
        for process in psutil.process_iter(["cmdline"]):
            if str(output) in (process.info["cmdline"] or []):
                process.kill()
        await eventually(lambda: not keeper_alive(output), within=30)
        size = Spool(output).size()
        await eventually(lambda: Spool(output).size() > size + 10 * RUN_BUDGET, within=30)
        async with Habitat.open(workspace, project=project, config=shell_config) as second:
            await eventually(lambda: keeper_alive(output), within=30)
            await eventually(lambda: on_disk(output) <= 2 * RUN_BUDGET, within=30)
            assert second.shell.store.running("w")
    finally:
        await kill_tree(run.record, grace=0.2)


async def test_a_quick_run_that_leaves_a_writer_behind_gets_its_keeper(habitat: Shell) -> None:
    # The run is over before a keeper's moment; what it left goes on writing its spool.
    result = await habitat.run(RunArgs(command="yes & echo started"))
    assert result.state == "exited"
    assert len(result.left_running) == 1
    output = Path(result.spool)
    try:
        await eventually(lambda: keeper_alive(output), within=30)
        await eventually(lambda: Spool(output).size() > 4 * RUN_BUDGET, within=30)
        await eventually(lambda: on_disk(output) <= 2 * RUN_BUDGET, within=30)
    finally:
        await habitat.kill(KillArgs(tab=result.tab))
