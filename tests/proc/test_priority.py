"""The session-group reading behind `make_background`: the kernel's three answers."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_habitat.proc import priority


def test_a_group_line_gives_its_name_and_nice(tmp_path: Path) -> None:
    path = tmp_path / "autogroup"
    path.write_text("/autogroup-123 nice 5\n", encoding="ascii")
    assert priority._autogroup(str(path)) == ("/autogroup-123", 5)


def test_an_empty_file_is_no_group(tmp_path: Path) -> None:
    # What the kernel prints for a task in a cgroup with the cpu controller (a container's).
    path = tmp_path / "autogroup"
    path.write_text("", encoding="ascii")
    assert priority._autogroup(str(path)) is None


def test_a_gone_process_is_no_group(tmp_path: Path) -> None:
    assert priority._autogroup(str(tmp_path / "gone")) is None


def test_our_own_session_group_is_never_lowered() -> None:
    before = priority._autogroup("/proc/self/autogroup")
    assert priority._autogroup_to(os.getpid(), 19) is None
    assert priority._autogroup("/proc/self/autogroup") == before


def test_a_run_in_its_own_session_is_lowered_when_ours_reads_empty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A CI container's processes can sit in the kernel's default group, whose file is
    # empty; a run started in a session of its own has a group, and that group is lowered.
    real = priority._autogroup
    monkeypatch.setattr(
        priority, "_autogroup", lambda path: None if path == "/proc/self/autogroup" else real(path)
    )
    proc = subprocess.Popen(["sleep", "3065"], start_new_session=True)
    try:
        applied = priority.make_background([proc.pid], 7)
        group = real(f"/proc/{proc.pid}/autogroup")
        if group is not None:  # where the kernel has autogroups
            assert applied[0] == "autogroup nice 7"
            assert group[1] == 7
        # Only ever lowered: a suite run under `nice -n 10` starts its sleep at 10 already.
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == max(7, os.nice(0))
    finally:
        proc.kill()
        proc.wait()


def test_a_start_in_its_own_session_is_lowered_for_now_and_put_back() -> None:
    # The warm-up's checkers: background while they start, normal once they answer. With
    # autogroups the session's group is lowered and put back; without, the process's own
    # nice is lowered, and it stays (raising it back needs a privilege).
    ours = os.getpriority(os.PRIO_PROCESS, 0)  # what the child inherits (a niced pytest)
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        path = f"/proc/{proc.pid}/autogroup"
        group = priority._autogroup(path)
        applied, put_back = priority.background_for_now(proc.pid, 10)
        if group is not None and group[1] < 10:
            assert applied == "autogroup nice 10 while it starts"
            assert priority._autogroup(path) == (group[0], 10)
            assert os.getpriority(os.PRIO_PROCESS, proc.pid) == ours  # its own nice untouched
            put_back()
            assert priority._autogroup(path) == group
        else:
            assert applied == "nice 10 (no autogroups: it stays)" or ours >= 10
            assert os.getpriority(os.PRIO_PROCESS, proc.pid) == max(ours, 10)
    finally:
        proc.kill()
        proc.wait()


def test_an_idle_process_in_its_own_session_has_its_group_lowered_too() -> None:
    # The background recording leads a session of its own: under autogroups its group
    # competed at nice 0 with the host's and the user's, SCHED_IDLE or not.
    proc = subprocess.Popen(["sleep", "3066"], start_new_session=True)
    try:
        path = f"/proc/{proc.pid}/autogroup"
        group = priority._autogroup(path)
        own = priority._autogroup("/proc/self/autogroup")
        applied = priority.make_idle(proc.pid)
        if group is not None and (own is None or own[0] != group[0]):
            assert applied[0] == "autogroup nice 19"
            assert priority._autogroup(path) == (group[0], 19)
        else:  # no autogroups here: the process's own priority is all there is
            assert "autogroup nice 19" not in applied
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == 19
    finally:
        proc.kill()
        proc.wait()
