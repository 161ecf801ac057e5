"""A run whose cgroup is empty ends without a process scan (`Spawner.ended_alone`); one that
left a process in its group, or whose leader this process did not place, still gets the scan."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_habitat.proc import cgroup
from agent_habitat.proc.spawner import ProcSpawner

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(cgroup.tracking() != "cgroup", reason="this machine gives no cgroup"),
]


async def test_an_empty_group_is_alone_and_goes(tmp_path: Path) -> None:
    spawner = ProcSpawner()
    marker = f"alone-{os.getpid()}-empty"
    process = spawner.spawn(
        ["true"], cwd=tmp_path, env=dict(os.environ), output=tmp_path / "out", marker=marker
    )
    assert await process.wait() == 0
    assert spawner.ended_alone(process.record)
    assert cgroup.group_pids(marker) is None  # its empty group went with the answer
    # Removed with its answer: asking again cannot vouch for a group this process no longer has.
    assert not spawner.ended_alone(process.record)


async def test_a_process_left_in_the_group_is_not_alone(tmp_path: Path) -> None:
    spawner = ProcSpawner()
    marker = f"alone-{os.getpid()}-left"
    process = spawner.spawn(
        ["sh", "-c", "sleep 3053 >/dev/null 2>&1 & echo $!"],
        cwd=tmp_path,
        env=dict(os.environ),
        output=tmp_path / "out",
        marker=marker,
    )
    assert await process.wait() == 0
    left = int((tmp_path / "out").read_text().split()[0])
    try:
        assert not spawner.ended_alone(process.record)
        assert left in [m.pid for m in spawner.members(process.record)]
    finally:
        os.kill(left, 9)


async def test_a_group_this_process_did_not_place_is_not_vouched_for(tmp_path: Path) -> None:
    marker = f"alone-{os.getpid()}-adopted"
    group = cgroup.prepare(marker)
    assert group is not None
    try:
        assert not cgroup.emptied(marker)  # empty, but whose run began elsewhere
    finally:
        cgroup.remove(marker)
