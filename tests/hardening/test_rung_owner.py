"""A verify rung must not outlive its host: where runs get cgroups, a rung's group names its
owner, and the next habitat process kills what a dead owner's rungs left running."""

from __future__ import annotations

import contextlib
import os
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

# A stand-in host: starts a "rung" that would run for an hour and a shell run, says so, and
# waits to be killed (SIGKILL: it cleans nothing up). Each sleep is this test process's own
# (3051.<pid>): another suite on the machine runs the same test.
_HOST = """
import os, sys
from pathlib import Path
from agent_habitat.proc import spawn
spawn(["sleep", sys.argv[2]], cwd=Path("."), env=dict(os.environ), output=Path(sys.argv[1]),
      marker="verify-gauntlet", outlive=False)
spawn(["sleep", sys.argv[3]], cwd=Path("."), env=dict(os.environ), output=Path(sys.argv[1]),
      marker="run-gauntlet-1")
print("started", flush=True)
sys.stdin.read()
"""


async def test_the_next_habitat_kills_what_a_dead_hosts_rung_left(tmp_path: Path) -> None:
    rung, run = ["sleep", f"3051.{os.getpid()}"], ["sleep", f"3052.{os.getpid()}"]
    with stand_in(_HOST, str(tmp_path / "out"), rung[1], run[1]) as (host, said):
        try:
            assert said == "started\n"
            # Both run while their host lives: counted before it dies, as after its death any
            # sweep on the machine may be the one that kills the rung.
            assert len(processes_running(rung)) == 1
            assert len(processes_running(run)) == 1
            host.kill()
            assert host.wait(timeout=30) == -9
            cgroup.sweep()
            await eventually(lambda: processes_running(rung) == [])
            # A shell run outlives its habitat by design: the sweep leaves it alone.
            assert processes_running(run) != []
        finally:
            # Whatever failed above, neither sleep outlives the test (another run would
            # count it).
            for left in processes_running(rung) + processes_running(run):
                with contextlib.suppress(psutil.NoSuchProcess):
                    left.kill()


async def test_a_living_owners_rung_is_left_alone(tmp_path: Path) -> None:
    from agent_habitat.proc import spawn

    rung = spawn(
        ["sleep", "3053"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        output=tmp_path / "out",
        marker="verify-alive",
        outlive=False,
    )
    try:
        cgroup.sweep()
        assert rung.alive()
    finally:
        assert rung.popen is not None
        rung.popen.kill()
        await rung.wait()


# A stand-in host of another pid namespace (a container sharing the cgroup tree): its folder
# is named by a namespace that is not this one.
_FOREIGN_HOST = _HOST.replace(
    "from agent_habitat.proc import spawn\n",
    "from agent_habitat.proc import spawn, cgroup\ncgroup.pid_namespace = lambda: '1'\n",
)


async def test_a_rung_of_another_pid_namespaces_habitat_is_never_swept(tmp_path: Path) -> None:
    # Its owner's pid means another process here (or none): its rungs are not this
    # habitat's to judge. Swept as gone, a live container's rungs died mid-run.
    rung, run = ["sleep", f"3054.{os.getpid()}"], ["sleep", f"3055.{os.getpid()}"]
    with stand_in(_FOREIGN_HOST, str(tmp_path / "out"), rung[1], run[1]) as (host, said):
        try:
            assert said == "started\n"
            assert len(processes_running(rung)) == 1
            host.kill()
            assert host.wait(timeout=30) == -9
            cgroup.sweep()
            assert len(processes_running(rung)) == 1
        finally:
            for left in processes_running(rung) + processes_running(run):
                with contextlib.suppress(psutil.NoSuchProcess):
                    left.kill()


def test_this_process_names_its_pid_namespace_where_linux_says() -> None:
    space = cgroup.pid_namespace()
    assert space == "" or space.isdigit()
    if Path("/proc/self/ns/pid").exists():
        assert space.isdigit()
