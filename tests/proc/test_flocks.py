"""Owner locks: a prober's instant on the lock never makes its owner give up."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from agent_habitat.proc.flocks import is_held, take
from agent_habitat.reach.lock import HostLock


def probe_held(path: Path) -> int:
    """A prober caught in the middle of its look: a shared lock on its own descriptor."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    return fd


def test_a_free_lock_is_taken_and_then_held(tmp_path: Path) -> None:
    path = tmp_path / "owner.lock"
    assert not is_held(path)  # no file: nobody
    fd = take(path)
    assert fd is not None
    try:
        assert is_held(path)
        assert take(path, patience=0) is None  # a second owner gives up
    finally:
        os.close(fd)
    assert not is_held(path)  # the kernel drops it with the descriptor


def test_an_owner_waits_out_a_prober(tmp_path: Path) -> None:
    path = tmp_path / "owner.lock"
    prober = probe_held(path)
    assert take(path, patience=0) is None  # impatient, it would take the prober for an owner
    taken: list[int | None] = []
    taker = threading.Thread(target=lambda: taken.append(take(path, patience=60)))
    taker.start()
    os.close(prober)
    taker.join(timeout=60)
    [fd] = taken
    assert fd is not None
    os.close(fd)


def test_a_host_starting_while_its_lock_is_probed_still_starts(tmp_path: Path) -> None:
    path = tmp_path / "host.lock"
    prober = probe_held(path)
    lock = HostLock(path)
    won: list[bool] = []
    starter = threading.Thread(target=lambda: won.append(lock.acquire()))
    starter.start()
    os.close(prober)
    starter.join(timeout=60)
    assert won == [True]
    assert is_held(path)
    lock.release()
