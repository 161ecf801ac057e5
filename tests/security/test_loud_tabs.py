"""Loud tabs leave the host its turn (issue 23, "Under load"): with 8 tabs printing flat out
and 20 callers, py-spy showed the host's loop idle and its threads waiting in the CPU's run
queue behind the runs (`/proc/PID/schedstat`: ~50 ms of waiting per `shell_scene`, 4 ms of
CPU). A run still going after `LONG_RUN_SECONDS` takes `long_run_nice`: its processes, what
they fork later, and its session's scheduling group where Linux groups by session."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_habitat.config import ShellConfig
from agent_habitat.habitat import Habitat
from agent_habitat.proc import kill_tree, members
from agent_habitat.shell.long_runs import LOUD_RUN_NICE
from agent_habitat.shell.models import CloseArgs, RunArgs
from agent_habitat.testing import eventually
from agent_habitat.workspace import Workspace
from shell_waits import await_file

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120), pytest.mark.finding("under-load")]


# Above this process's own nice (the suite may run under `nice -n 10`), so the change shows.
_BASE = os.getpriority(os.PRIO_PROCESS, 0)
_NICE = min(19, _BASE + 5)


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncIterator[Habitat]:
    project = tmp_path / "project"
    project.mkdir()
    async with Habitat.open(
        Workspace.for_project(project), project=project, config=ShellConfig(long_run_nice=_NICE)
    ) as habitat:
        yield habitat
        for row in habitat.db.query("SELECT id FROM runs"):
            run = habitat.shell.store.get(row["id"])
            if run is not None and run.record is not None and members(run.record):
                await kill_tree(run.record, grace=0.2)


def _autogroup_nice(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/autogroup", encoding="ascii") as f:
            return int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        return None  # no autogroups here; empty where this session is in the kernel's default


async def test_a_long_run_yields_the_cpu_and_what_it_forks_later_too(
    opened: Habitat, tmp_path: Path
) -> None:
    go, printed = tmp_path / "go", tmp_path / "nice.out"
    command = f"{await_file(go, within=60)}; nice >{printed}; exec sleep 3061"
    result = await opened.shell.run(RunArgs(command=command, tab="loud", background=True))
    assert result.pid is not None
    pid = result.pid
    await eventually(lambda: os.getpriority(os.PRIO_PROCESS, pid) >= _NICE, within=30)
    host_group = _autogroup_nice(os.getpid())
    if host_group is not None:
        assert _autogroup_nice(pid) == max(host_group, _NICE)
        assert _autogroup_nice(os.getpid()) == host_group  # the host's own group keeps its weight
    go.touch()
    await eventually(
        lambda: printed.is_file() and bool(printed.read_text(encoding="ascii").strip()), within=30
    )
    assert printed.read_text(encoding="ascii").strip() == str(_NICE)  # forked after: inherited


def test_a_process_is_never_raised_above_the_nice_it_has(tmp_path: Path) -> None:
    import subprocess

    from agent_habitat.proc.priority import make_background

    lower = min(19, _NICE + 2)
    # The lower nice is set before exec (Popen returns after it): `nice -n` as the program
    # raced the check, which read the nice it had before `nice` ran (seen once under load).
    procs = [
        subprocess.Popen(["sleep", "3063"], preexec_fn=lambda: os.nice(lower - _BASE)),
        subprocess.Popen(["sleep", "3063"]),
    ]
    try:
        applied = make_background([p.pid for p in procs], _NICE)
        assert f"nice {_NICE} (2 processes)" in applied
        got = [os.getpriority(os.PRIO_PROCESS, p.pid) for p in procs]
        assert got == [lower, _NICE]
    finally:
        for p in procs:
            p.kill()
            p.wait()


def test_a_process_of_the_callers_own_session_leaves_the_callers_group_alone() -> None:
    # A whole-suite run found its own session's group at nice 15: the test above lowered
    # `sleep`s of pytest's session, and with them the group pytest (a host) itself runs in.
    import subprocess

    from agent_habitat.proc.priority import make_background

    own = _autogroup_nice(os.getpid())
    proc = subprocess.Popen(["sleep", "3064"])  # the same session as this process
    try:
        applied = make_background([proc.pid], _NICE)
        assert not any(part.startswith("autogroup") for part in applied), applied
        assert _autogroup_nice(os.getpid()) == own
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == _NICE  # the process itself is lowered
    finally:
        proc.kill()
        proc.wait()


async def test_closing_a_loud_tab_removes_its_spool_off_the_event_loop(
    opened: Habitat, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Closing 8 tabs of `yes` spent 2.0 s in unlink (91 files, the spools' freed holes) on
    # the host's event loop, about 250 ms per tab during which no caller got an answer. Here
    # the removal waits, bounded, for the loop to run something else meanwhile.
    result = await opened.shell.run(RunArgs(command="exec yes", tab="loud", background=True))
    assert result.pid is not None
    removing, loop_ran = threading.Event(), threading.Event()
    waited: list[bool] = []
    remove = shutil.rmtree

    def slow_rmtree(path: Any, *args: Any, **kwargs: Any) -> None:
        removing.set()
        waited.append(loop_ran.wait(timeout=10))  # on the loop: nothing sets it, 10 s, False
        remove(path, *args, **kwargs)

    async def meanwhile() -> None:
        await eventually(removing.is_set, within=60)
        loop_ran.set()

    monkeypatch.setattr(shutil, "rmtree", slow_rmtree)
    async with anyio.create_task_group() as tg:
        tg.start_soon(meanwhile)
        closed = await opened.shell.close(CloseArgs(tab="loud"))
    assert closed.killed
    assert waited == [True]  # one run folder, removed while the loop ran
    assert not Path(result.spool).parent.exists()  # removed all the same
    # Nothing left under another name either (it is renamed first: see shell/run_folders.py).
    # (Folders made ahead for the tab's next run, `next-…`, go in a task of their own.)
    left = os.listdir(Path(result.spool).parent.parent)
    assert not [name for name in left if not name.startswith("next-")], left


async def test_a_long_run_writing_flat_out_yields_further_and_a_quiet_one_does_not(
    tmp_path: Path,
) -> None:
    # At nice 5, eight tabs of `yes` weighed 8 x 335 against the host's and its callers'
    # 1,024 each: on a quiet 2-core machine the callers got under half a core, and
    # shell_scene's loaded p99 stayed above 100 ms. A run that keeps writing its output
    # faster than LOUD_BYTES_PER_SECOND takes LOUD_RUN_NICE; one that is long but quiet keeps
    # the long-run nice.
    if _BASE >= LOUD_RUN_NICE:
        pytest.skip(f"this process already runs at nice {_BASE}: nothing lower to show")
    project = tmp_path / "project"
    project.mkdir()
    long_nice = _BASE + 1
    async with Habitat.open(
        Workspace.for_project(project),
        project=project,
        config=ShellConfig(long_run_nice=long_nice),
    ) as habitat:
        loud = await habitat.shell.run(RunArgs(command="exec yes", tab="loud", background=True))
        quiet = await habitat.shell.run(
            RunArgs(command="exec sleep 3065", tab="quiet", background=True)
        )
        assert loud.pid is not None
        assert quiet.pid is not None
        loud_pid, quiet_pid = loud.pid, quiet.pid
        try:
            await eventually(
                lambda: os.getpriority(os.PRIO_PROCESS, loud_pid) >= LOUD_RUN_NICE, within=60
            )
            host_group = _autogroup_nice(os.getpid())
            if host_group is not None:
                assert _autogroup_nice(loud_pid) == max(host_group, LOUD_RUN_NICE)
            await eventually(
                lambda: os.getpriority(os.PRIO_PROCESS, quiet_pid) >= long_nice, within=30
            )
            assert os.getpriority(os.PRIO_PROCESS, quiet_pid) == long_nice
        finally:
            for tab in ("loud", "quiet"):
                await habitat.shell.close(CloseArgs(tab=tab))
