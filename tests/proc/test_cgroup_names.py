"""A habitat process's cgroup folder is named by its start as psutil gives it, whether this
process read it from `/proc` (`cgroup._started`, psutil not loaded) or psutil did: an older
habitat reads the names a newer one wrote, and the other way round."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil
import pytest

from agent_habitat.proc import cgroup

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/self/stat"), reason="no /proc: psutil answers alone"
)


def test_a_start_is_psutils_for_this_process_and_others() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        for pid in (os.getpid(), os.getppid(), child.pid):
            assert cgroup._started(pid) == int(psutil.Process(pid).create_time())
    finally:
        child.communicate(b"")


def test_an_owner_that_is_gone_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    started = cgroup._started(child.pid)
    assert cgroup._owner_alive(child.pid, started)
    child.wait()
    assert not cgroup._owner_alive(child.pid, started)
