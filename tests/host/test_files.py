"""The host's files: private permissions, a stable token, the lock."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.errors import UsageError
from agent_habitat.host.server import parse_tcp
from agent_habitat.reach.files import HostFiles, UnsafePermissionsError
from agent_habitat.reach.lock import HostLock, HostRecord, read_record
from agent_habitat.workspace import Workspace


def files(tmp_path: Path) -> HostFiles:
    root = tmp_path / "project"
    root.mkdir(parents=True)
    return HostFiles(Workspace.for_project(root))


def test_prepare_makes_the_state_folder_the_users_alone(tmp_path: Path) -> None:
    f = files(tmp_path)
    f.prepare()
    assert stat.S_IMODE(f.state_dir.stat().st_mode) == 0o700


def test_a_group_writable_state_folder_is_refused_with_the_fix(tmp_path: Path) -> None:
    f = files(tmp_path)
    f.state_dir.mkdir(parents=True)
    os.chmod(f.state_dir, 0o770)
    with pytest.raises(UnsafePermissionsError, match="chmod 700"):
        f.prepare()


def test_a_world_writable_token_file_is_refused(tmp_path: Path) -> None:
    f = files(tmp_path)
    f.prepare()
    f.token()
    os.chmod(f.token_file, 0o666)
    with pytest.raises(UnsafePermissionsError, match="token"):
        f.check_private()


def test_the_token_is_random_private_and_stable(tmp_path: Path) -> None:
    f = files(tmp_path)
    f.prepare()
    first = f.token()
    assert len(first) >= 32
    assert f.token() == first
    assert stat.S_IMODE(f.token_file.stat().st_mode) == 0o600
    other = files(tmp_path / "other")
    other.prepare()
    assert other.token() != first


def test_one_lock_holder_at_a_time_and_a_dead_holders_lock_is_free(tmp_path: Path) -> None:
    f = files(tmp_path)
    f.prepare()
    # What a dead host leaves: a record naming it, and no one holding the lock.
    f.lock.write_text(HostRecord(pid=999_999, started_at=0, socket="x").model_dump_json())
    assert read_record(f.lock) is None
    first = HostLock(f.lock)
    assert first.acquire()
    record = HostRecord(pid=os.getpid(), started_at=1.0, socket=str(f.socket))
    first.publish(record)
    assert read_record(f.lock) == record
    assert not HostLock(f.lock).acquire()
    first.release()
    assert read_record(f.lock) is None
    assert HostLock(f.lock).acquire()


@pytest.mark.parametrize("value", ["127.0.0.1:0", "localhost:8765", "[::1]:9"])
def test_loopback_tcp_addresses_are_accepted(value: str) -> None:
    host, port = parse_tcp(value, allow_remote=False)
    assert port in (0, 8765, 9)
    assert host in ("127.0.0.1", "localhost", "::1")


def test_a_non_loopback_bind_is_refused_without_allow_remote() -> None:
    with pytest.raises(UsageError, match="--allow-remote"):
        parse_tcp("0.0.0.0:8765", allow_remote=False)
    assert parse_tcp("0.0.0.0:8765", allow_remote=True) == ("0.0.0.0", 8765)


@pytest.mark.parametrize("value", ["8765", "host:", "127.0.0.1:http", "example.com:80"])
def test_malformed_tcp_addresses_are_refused(value: str) -> None:
    with pytest.raises(UsageError):
        parse_tcp(value, allow_remote=True)


# Runs the host's entry point in a child and says whether the server module was imported.
_MAIN = (
    "import sys\n"
    "from agent_habitat.host.__main__ import main\n"
    "code = main(['--project', sys.argv[1]])\n"
    "print('server imported' if 'agent_habitat.host.server' in sys.modules else 'no server')\n"
    "sys.exit(code)\n"
)


def test_a_host_started_while_the_lock_is_held_exits_3_before_importing_the_server(
    tmp_path: Path,
) -> None:
    f = files(tmp_path)
    f.prepare()
    held = HostLock(f.lock)
    assert held.acquire()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _MAIN, str(f.workspace.root)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        held.release()
    assert done.returncode == 3, done.stderr
    assert f"a host already runs for {f.workspace.root}" in done.stderr
    assert done.stdout.strip() == "no server"
