"""`habitat host stop` says "stopped" only once the host's process is gone, and SIGTERM
ends a CLI command within its grace whatever a worker thread is doing.

Issue 23: after a dozen verifies `habitat host stop` printed "stopped host pid N", exit 0,
and pid N was still alive: the stop waited for the lock, which a host frees on its way
out, not for the process. Stand-in hosts here are real processes that hold the real lock
and misbehave on purpose: one lingers after freeing it, one ignores SIGTERM.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from agent_habitat.cli import main
from agent_habitat.proc import process_create_time
from agent_habitat.reach import ensure_host, stop_host
from agent_habitat.reach.launcher import host_files
from agent_habitat.verify.rungs.dmypy import DmypyDaemon
from agent_habitat.workspace import Workspace

pytestmark = [pytest.mark.timeout(120), pytest.mark.finding("special-files")]

# What a misbehaving host does once it holds the lock and has published its record.
_STAND_IN = textwrap.dedent(
    """
    import json, os, signal, sys, time
    from pathlib import Path
    from agent_habitat.reach.files import HostFiles
    from agent_habitat.reach.lock import HostLock, HostRecord
    from agent_habitat.workspace import Workspace

    files = HostFiles(Workspace.for_project(Path(sys.argv[1])))
    files.prepare()
    lock = HostLock(files.lock)
    assert lock.acquire()
    files.socket.touch()  # where a host listens; a killed one leaves it behind
    behaviour = sys.argv[2]

    def on_term(signum, frame):
        if behaviour == "lingers":
            lock.release()  # as the real host does, then it is slow to exit
            time.sleep(4)
            os._exit(0)

    signal.signal(signal.SIGTERM, on_term if behaviour == "lingers" else signal.SIG_IGN)
    lock.publish(HostRecord(pid=os.getpid(), started_at=time.time(), socket=str(files.socket)))
    print("ready", flush=True)
    while True:
        time.sleep(60)
    """
)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    yield root
    stop_host(root, grace=1)


def _stand_in(root: Path, behaviour: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _STAND_IN, str(root), behaviour],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    proc.stdout.close()
    return proc


def _gone(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


def test_stop_returns_only_once_a_host_that_lingers_after_its_lock_has_exited(
    project: Path,
) -> None:
    host = _stand_in(project, "lingers")
    stopped = stop_host(project)
    assert stopped is not None
    assert stopped.signal == "SIGTERM"
    assert host.poll() is not None or _gone(host.pid)
    host.wait(timeout=10)


def test_a_host_that_ignores_sigterm_is_killed_and_the_stop_says_so(project: Path) -> None:
    host = _stand_in(project, "ignores")
    stopped = stop_host(project, grace=1)
    assert stopped is not None
    assert stopped.signal == "SIGKILL"
    assert host.wait(timeout=10) == -signal.SIGKILL
    assert f"killed host pid {host.pid}" in stopped.said()
    assert not host_files(project).socket.exists()  # the stop cleared what the kill left


def test_the_warm_daemon_of_a_killed_host_is_stopped_with_it(project: Path) -> None:
    host = _stand_in(project, "ignores")
    # A real process in the daemon's place, owned by the stand-in host (tests/hardening
    # test_warm_daemons.py does the same).
    workspace = Workspace.for_project(project)
    daemon = DmypyDaemon(workspace)
    daemon.dir.mkdir(parents=True, exist_ok=True)
    warm = subprocess.Popen(["sleep", "3023"])
    try:
        daemon.status_file.write_text(json.dumps({"pid": warm.pid}), encoding="utf-8")
        owner = {"pid": host.pid, "create_time": process_create_time(host.pid)}
        daemon.owner_file.write_text(json.dumps(owner), encoding="utf-8")
        stopped = stop_host(project, grace=1)
        assert stopped is not None
        assert stopped.reaped == ("dmypy daemon",)
        assert warm.wait(timeout=10) is not None
    finally:
        warm.kill()
        warm.wait()
        host.wait(timeout=10)


def test_habitat_host_stop_reports_a_real_host_gone(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = ensure_host(project).record
    assert main(["host", "stop", "--project", str(project), "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["stopped"] is True
    assert said["pid"] == record.pid
    assert _gone(record.pid)
    assert not host_files(project).socket.exists(), said


def test_sigterm_ends_a_cli_command_whose_worker_thread_is_blocked() -> None:
    # A command body blocked in a worker thread on a read nothing will ever answer: SIGTERM
    # must end the process, whatever the thread does (130 when the cancellation got the
    # process out, 143 when the watchdog had to).
    script = textwrap.dedent(
        """
        import os, anyio
        from agent_habitat.cli.common import run_command

        async def body():
            reader, _writer = os.pipe()
            print("ready", flush=True)
            await anyio.to_thread.run_sync(os.read, reader, 1)
            return 0

        raise SystemExit(run_command(body, term_as_interrupt=True))
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    proc.stdout.close()
    proc.send_signal(signal.SIGTERM)
    try:
        # A bound, not a speed claim: the grace is 1.5 s; without the watchdog, forever.
        code = proc.wait(timeout=30)
    finally:
        proc.kill()
    assert code in (130, 128 + signal.SIGTERM)


def test_a_host_catches_sigterm_from_the_moment_its_record_says_it_serves(
    project: Path,
) -> None:
    # A stop sent as the record appeared once killed the host by SIGTERM's default action
    # (its handler was installed a moment after): socket left behind, warm daemons running.
    record = ensure_host(project).record
    with open(f"/proc/{record.pid}/status", encoding="ascii") as status:
        caught = next(line for line in status if line.startswith("SigCgt:"))
    assert int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1))
