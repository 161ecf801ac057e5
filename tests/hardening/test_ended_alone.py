"""A run whose cgroup is empty ends without a process scan (`Spawner.ended_alone`), but only
when its leader was in its group before it could fork (`Spawner.prestart`, or a wrapper
that moves itself in first thing): a leader placed after its start may have forked a child
outside the group first (d281203, reverted in c10c899, vouched for such a run under load),
so such a run gets the scan, and the scan looks beyond its group."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from agent_habitat.proc import cgroup
from agent_habitat.proc.spawner import ProcSpawner
from agent_habitat.proc.supervised import Prestarted

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(cgroup.tracking() != "cgroup", reason="this machine gives no cgroup"),
]

# Reads one command line from stdin (EOF: runs nothing), as the shell's prestarted wrapper does.
_WAITER = ["sh", "-c", 'read -r __c || exit 7; eval "$__c"']


async def _prestarted(spawner: ProcSpawner, tmp_path: Path, name: str) -> Prestarted:
    marker = f"alone-{os.getpid()}-{name}"
    started = await spawner.prestart(_WAITER, cwd=tmp_path, env=dict(os.environ), marker=marker)
    assert started.born_inside
    return started


def _go(started: Prestarted, line: str) -> None:
    os.write(started.go, line.encode() + b"\n")
    os.close(started.go)


async def test_a_prestarted_run_whose_group_emptied_is_alone_and_its_group_goes_when_released(
    tmp_path: Path,
) -> None:
    spawner = ProcSpawner()
    started = await _prestarted(spawner, tmp_path, "empty")
    _go(started, "true")
    with anyio.fail_after(10):
        assert await started.process.wait() == 0
    record = started.process.record
    assert spawner.ended_alone(record)
    assert record.marker is not None
    assert cgroup.group_pids(record.marker) == []  # it stays until released, after the answer
    spawner.release_group(record)
    assert cgroup.group_pids(record.marker) is None
    # Released: asking again cannot vouch for a group this process no longer has.
    assert not spawner.ended_alone(record)


async def test_a_process_a_prestarted_run_left_is_not_alone(tmp_path: Path) -> None:
    spawner = ProcSpawner()
    started = await _prestarted(spawner, tmp_path, "left")
    pid_file = tmp_path / "left.pid"
    _go(started, f"sleep 3053 >/dev/null 2>&1 & echo $! >{pid_file}")
    with anyio.fail_after(10):
        assert await started.process.wait() == 0
    left = int(pid_file.read_text())
    try:
        assert not spawner.ended_alone(started.process.record)
        assert left in [m.pid for m in spawner.members(started.process.record)]
    finally:
        os.kill(left, 9)


async def test_a_run_placed_after_its_start_is_never_vouched_for(tmp_path: Path) -> None:
    # Its leader is placed after the fork: a child it forked first would be outside the group,
    # where `populated 0` cannot see it. The scan (session, marker) finds it there too.
    spawner = ProcSpawner()
    marker = f"alone-{os.getpid()}-cold"
    process = spawner.spawn(
        ["sh", "-c", "sleep 3053 >/dev/null 2>&1 & echo $!"],
        cwd=tmp_path,
        env=dict(os.environ),
        output=tmp_path / "out",
        marker=marker,
    )
    with anyio.fail_after(10):
        assert await process.wait() == 0
    left = int((tmp_path / "out").read_text().split()[0])
    try:
        assert not spawner.ended_alone(process.record)
        assert left in [m.pid for m in spawner.members(process.record)]
    finally:
        os.kill(left, 9)
    ended = spawner.spawn(
        ["true"], cwd=tmp_path, env=dict(os.environ), output=tmp_path / "out2", marker=marker
    )
    with anyio.fail_after(10):
        assert await ended.wait() == 0
    assert not spawner.ended_alone(ended.record)  # empty, but placed after its start
    cgroup.remove(marker)


async def test_a_prestarted_process_closed_unwritten_runs_nothing(tmp_path: Path) -> None:
    spawner = ProcSpawner()
    started = await _prestarted(spawner, tmp_path, "unused")
    os.close(started.go)
    with anyio.fail_after(10):
        assert await started.process.wait() == 7  # its `read` met EOF: it ran no command
    assert spawner.ended_alone(started.process.record)


async def test_a_group_this_process_did_not_place_first_is_not_vouched_for() -> None:
    marker = f"alone-{os.getpid()}-adopted"
    group = cgroup.prepare(marker)
    assert group is not None
    try:
        assert not cgroup.emptied(marker)  # empty, but whose run began elsewhere
    finally:
        cgroup.remove(marker)


async def test_a_wrapper_that_joins_its_group_first_is_vouched_for(tmp_path: Path) -> None:
    spawner = ProcSpawner()
    marker = f"alone-{os.getpid()}-joins"
    script = '{ echo $$ >"$HABITAT_CGROUP/cgroup.procs"; } 2>/dev/null; sleep 3053 & echo $!'
    process = spawner.spawn(
        ["sh", "-c", script],
        cwd=tmp_path,
        env=dict(os.environ),
        output=tmp_path / "out",
        marker=marker,
        joins_group=True,
    )
    with anyio.fail_after(10):
        assert await process.wait() == 0
    left = int((tmp_path / "out").read_text().split()[0])
    try:
        assert not spawner.ended_alone(process.record)  # its child lives: the scan tells
        assert [m.pid for m in spawner.members(process.record)] == [left]  # its group alone
    finally:
        os.kill(left, 9)
