"""A verify rung must not outlive its host: where runs get cgroups, a rung's group names its
owner, and the next habitat process kills what a dead owner's rungs left running."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from agent_habitat.proc import cgroup
from agent_habitat.testing import eventually

from .conftest import processes_running

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(cgroup.tracking() != "cgroup", reason="this machine gives no cgroup"),
]

# A stand-in host: starts a "rung" that would run for an hour, then dies by SIGKILL.
_HOST = """
import os, signal, sys
from pathlib import Path
from agent_habitat.proc import spawn
spawn(["sleep", "3051"], cwd=Path("."), env=dict(os.environ), output=Path(sys.argv[1]),
      marker="verify-gauntlet", outlive=False)
spawn(["sleep", "3052"], cwd=Path("."), env=dict(os.environ), output=Path(sys.argv[1]),
      marker="run-gauntlet-1")
os.kill(os.getpid(), signal.SIGKILL)
"""


async def test_the_next_habitat_kills_what_a_dead_hosts_rung_left(tmp_path: Path) -> None:
    died = subprocess.run([sys.executable, "-c", _HOST, str(tmp_path / "out")], check=False)
    try:
        assert died.returncode == -9
        assert len(processes_running(["sleep", "3051"])) == 1
        assert len(processes_running(["sleep", "3052"])) == 1
        cgroup.sweep()
        await eventually(lambda: processes_running(["sleep", "3051"]) == [])
        # A shell run outlives its habitat by design: the sweep leaves it alone.
        assert processes_running(["sleep", "3052"]) != []
    finally:
        # Whatever failed above, neither sleep outlives the test (another run would count it).
        for left in processes_running(["sleep", "3051"]) + processes_running(["sleep", "3052"]):
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
