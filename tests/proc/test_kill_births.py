"""The scan of a run's end reads a process's start from its stat line (kill._Births) and
builds a psutil.Process only for those that may be members: it must never call a process
born since the run older than it."""

from __future__ import annotations

import os
import subprocess

import psutil

from agent_habitat.proc.kill import _Births


def test_every_process_born_since_the_start_may_be_a_member_and_an_older_one_is_not() -> None:
    # A run's start as its record has it: psutil's, whose boot time is in whole seconds
    # (a process's create time may read up to a second early; both sides read the same).
    leader = subprocess.Popen(["sleep", "30"])
    started = psutil.Process(leader.pid).create_time()
    child = subprocess.Popen(["sleep", "30"])
    try:
        births = _Births(started)
        assert births.maybe(leader.pid)
        assert births.maybe(child.pid)
        for pid in psutil.pids():
            try:
                born = psutil.Process(pid).create_time()
            except psutil.Error:
                continue
            if born >= started - 0.05:
                assert births.maybe(pid), pid
        if births.threshold is not None and os.path.exists(f"/proc/{os.getpid()}/stat"):
            assert not births.maybe(os.getpid())  # this test's process began before
    finally:
        for proc in (leader, child):
            proc.kill()
            proc.wait()


def test_without_a_start_time_every_process_may_be_a_member() -> None:
    births = _Births(0.0)
    assert births.threshold is None
    assert births.maybe(os.getpid())
