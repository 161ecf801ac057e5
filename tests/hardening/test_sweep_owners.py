"""Two habitat processes on one machine share the cgroup parent of their runs: one's sweep
must leave the other's groups alone (one just made, its process not in it yet; one whose run
ended alone and that its habitat still reads), and clear only what a gone one left."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from agent_habitat.proc import cgroup
from agent_habitat.testing import eventually

from .conftest import processes_running, stand_in

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(cgroup.tracking() != "cgroup", reason="this machine gives no cgroup"),
]

_SWEEP = "from agent_habitat.proc import cgroup; cgroup.sweep()"

# A habitat that starts a run outliving it, leaves an empty group, says where, and exits
# when told to (its stdin closed).
_GONE = """
import os, sys
from pathlib import Path
from agent_habitat.proc import cgroup, spawn
cgroup.prepare("run-sweep-empty")
spawn(["sleep", sys.argv[2]], cwd=Path("."), env=dict(os.environ), output=Path(sys.argv[1]),
      marker="run-sweep-kept")
print(cgroup.prepare("run-sweep-empty"), flush=True)
sys.stdin.read()
"""


def _another_habitat_sweeps() -> None:
    subprocess.run([sys.executable, "-c", _SWEEP], check=True)


async def test_another_habitats_sweep_leaves_a_group_just_made(tmp_path: Path) -> None:
    group = cgroup.prepare(f"run-sweep-fresh-{tmp_path.name}")
    assert group is not None
    try:
        _another_habitat_sweeps()
        assert group.is_dir()  # the run's process can still be placed in it
    finally:
        with contextlib.suppress(OSError):
            group.rmdir()


async def test_another_habitats_sweep_leaves_a_run_that_ended_alone(tmp_path: Path) -> None:
    from agent_habitat.proc.supervised import prestart

    marker = f"run-sweep-ended-{tmp_path.name}"
    started = prestart(
        ["sh", "-c", "read x"], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, marker=marker
    )
    try:
        assert cgroup.born_inside(marker)
        os.close(started.go)  # it exits without running anything
        await started.process.wait()
        await eventually(lambda: cgroup.emptied(marker))
        _another_habitat_sweeps()
        assert cgroup.emptied(marker)  # still read from its group, not guessed
    finally:
        cgroup.remove(marker)


async def test_a_gone_habitats_empty_groups_go_and_its_runs_stay_killable(tmp_path: Path) -> None:
    # Its own sleep, so another suite on the machine (two side by side) is not counted.
    sleeping = ["sleep", f"3054.{os.getpid()}"]
    with stand_in(_GONE, str(tmp_path / "out"), sleeping[1]) as (gone, said):
        empty = Path(said.strip())
        try:
            # Looked at while its habitat lives: once it is gone, any sweep may be first.
            assert empty.is_dir()
            assert empty.parent.parent.name == "agent-habitat"  # in the gone habitat's folder
            assert gone.stdin is not None
            gone.stdin.close()
            assert gone.wait(timeout=30) == 0
            cgroup.sweep()
            assert not empty.exists()
            sleeper = processes_running(sleeping)
            assert len(sleeper) == 1
            assert cgroup.group_pids("run-sweep-kept") == [sleeper[0].pid]
            assert cgroup.group_kill("run-sweep-kept")
            await eventually(lambda: processes_running(sleeping) == [])
            await eventually(lambda: cgroup.group_pids("run-sweep-kept") in ([], None))
            cgroup.sweep()
            assert not empty.parent.exists()
        finally:
            for left in processes_running(sleeping):
                with contextlib.suppress(psutil.NoSuchProcess):
                    left.kill()
