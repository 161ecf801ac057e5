"""Finding, starting and stopping a workspace's host from another process.

`ensure_host` starts one detached (its own session, output to `host.log`, stdin from
/dev/null) when none runs, and waits, bounded, until it listens. Two starters racing each
spawn a host; the lock lets one win and the other exits, and both starters return the
winner's record.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from agent_habitat.errors import HabitatError
from agent_habitat.git_env import git_env
from agent_habitat.proc import flocks
from agent_habitat.workspace import Workspace

from .files import HostFiles
from .lock import HostLock, HostRecord, is_held, read_record

__all__ = [
    "HostHandle",
    "StoppedHost",
    "ensure_host",
    "find_host",
    "host_files",
    "probe_host",
    "spawn_host",
    "stop_host",
    "wait_gone",
]

# A bound for a host that hangs while starting; a loaded machine needs a lot of it.
START_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 10.0
# After SIGKILL: the kernel frees a process at once unless it sleeps in the kernel (D state).
KILL_WAIT_SECONDS = 5.0
_POLL_SECONDS = 0.02


@dataclass(frozen=True)
class HostHandle:
    record: HostRecord
    started: bool
    """True when this call started the host, False when it found it running."""


def host_files(root: Path) -> HostFiles:
    return HostFiles(Workspace.for_project(root))


def find_host(root: Path) -> HostRecord | None:
    """The running host of the workspace `root`, or None."""
    return read_record(host_files(root).lock)


def ensure_host(root: Path, *, tcp: str | None = None, allow_remote: bool = False) -> HostHandle:
    """The workspace's running host, started (detached) when none runs."""
    files = host_files(root)
    files.prepare()
    record = read_record(files.lock)
    if record is not None:
        if tcp and record.tcp is None:
            raise HabitatError(
                f"a host already runs for {root} (pid {record.pid}) without TCP; "
                "stop it (`habitat host stop`) and start it again with --tcp"
            )
        return HostHandle(record, started=False)
    argv = [sys.executable, "-m", "agent_habitat.host", "--project", str(root)]
    if tcp:
        argv += ["--tcp", tcp]
    if allow_remote:
        argv.append("--allow-remote")
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        proc = _spawn(argv, root, files)
        while time.monotonic() < deadline:
            record = read_record(files.lock)
            if record is not None:
                return HostHandle(record, started=record.pid == proc.pid)
            code = proc.poll()
            if code is not None and not is_held(files.lock):
                if code == 3:
                    break  # it lost the lock to a host that is gone already: start another
                raise HabitatError(
                    f"the host exited with status {code} before it listened: {_tail(files.log)}"
                )
            time.sleep(_POLL_SECONDS)
    raise HabitatError(
        f"the host did not start within {START_TIMEOUT_SECONDS:.0f}s; see {files.log}"
    )


def spawn_host(root: Path) -> int | None:
    """Start the workspace's host detached and return at once with its pid, without waiting
    for it to listen (the caller goes on, or exits); None when a host runs or is starting."""
    files = host_files(root)
    files.prepare()
    # The lock is taken here and handed to the host, so the workspace is never without one
    # between this return and the host's own start (a second or more of imports): a command
    # right behind this one waits for it instead of opening the workspace itself.
    fd = flocks.take(files.lock, patience=0)
    if fd is None:
        return None
    try:
        os.ftruncate(fd, 0)  # no record yet: the host is starting
        argv = [sys.executable, "-m", "agent_habitat.host", "--project", str(root)]
        return _spawn([*argv, "--lock-fd", str(fd)], root, files, pass_fds=(fd,)).pid
    finally:
        os.close(fd)


def _spawn(
    argv: list[str], root: Path, files: HostFiles, pass_fds: tuple[int, ...] = ()
) -> subprocess.Popen[bytes]:
    fd = os.open(files.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        proc = subprocess.Popen(
            argv,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
            pass_fds=pass_fds,
            # The host outlives whoever started it: a git hook's or `git bisect run`'s
            # repository variables are that moment's, not the tabs' of the hours after.
            env=git_env(),
        )
    finally:
        os.close(fd)
    # Reap it whenever it ends, so a host that dies under a long-lived starter (the
    # bridge) leaves no zombie behind.
    threading.Thread(target=proc.wait, name="habitat-host-reaper", daemon=True).start()
    return proc


def wait_gone(root: Path, pid: int, timeout: float = STOP_TIMEOUT_SECONDS) -> bool:
    """Wait until host `pid` of `root` no longer holds the lock (it is exiting: its socket
    closed before the kernel dropped its lock). False when it still does after `timeout`."""
    lock = host_files(root).lock
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record = read_record(lock)
        if not is_held(lock) or (record is not None and record.pid != pid):
            return True
        time.sleep(_POLL_SECONDS)
    return False


@dataclass(frozen=True)
class StoppedHost:
    """How a host ended: only ever built once its process is gone."""

    record: HostRecord
    signal: str
    """The signal that ended it: SIGTERM (it shut down) or SIGKILL (it did not, in time)."""
    waited_s: float
    reaped: tuple[str, ...] = ()
    """Warm daemons of a killed host that the stopper stopped in its place."""

    @property
    def pid(self) -> int:
        return self.record.pid

    def said(self) -> str:
        if self.signal == "SIGTERM":
            return f"stopped host pid {self.pid} ({self.waited_s:.1f}s)"
        line = f"killed host pid {self.pid}: it had not exited {self.waited_s:.0f}s after SIGTERM"
        return line + (f"; stopped its {', '.join(self.reaped)}" if self.reaped else "")


def stop_host(root: Path, *, grace: float = STOP_TIMEOUT_SECONDS) -> StoppedHost | None:
    """SIGTERM the running host and wait until its process is gone; SIGKILL after `grace`
    seconds (0: at once, for a hung host), then stop the warm daemons it could not. Its runs
    go on. None: none ran. HabitatError when the process outlives SIGKILL."""
    files = host_files(root)
    record = read_record(files.lock)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    # A host that holds the lock but has not published its record yet is starting: wait for
    # it, or it would be left running by a stop that came a moment too early.
    while record is None and is_held(files.lock) and time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
        record = read_record(files.lock)
    if record is None:
        return None
    process = _process_of(record)
    began = time.monotonic()
    steps = [(signal.SIGTERM, grace)] if grace > 0 else []
    for signum, bound in (*steps, (signal.SIGKILL, KILL_WAIT_SECONDS)):
        if process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(record.pid, signum)
        if _wait_ended(files, process, bound):
            waited = time.monotonic() - began
            reaped: tuple[str, ...] = ()
            if signum == signal.SIGKILL:
                reaped = _reap_warm(files.workspace)
                _clear_killed(files)
            return StoppedHost(record, signal.Signals(signum).name, waited, reaped)
    raise HabitatError(
        f"host pid {record.pid} is still running {time.monotonic() - began:.0f}s after SIGKILL "
        "(stuck in the kernel, perhaps on a hung file system); it holds "
        f"{files.lock} until it ends"
    )


def _clear_killed(files: HostFiles) -> None:
    """Remove the socket a killed host never did, under its lock: a host that starts
    meanwhile takes the lock first and binds after, so its socket is never the one removed."""
    lock = HostLock(files.lock)
    if lock.acquire():
        try:
            files.socket.unlink(missing_ok=True)
        finally:
            lock.release()


def _process_of(record: HostRecord) -> psutil.Process | None:
    """The host's process, or None when it is gone (a pid reused since is not it)."""
    try:
        process = psutil.Process(record.pid)
        # The record is written once the host listens, so its process began before that.
        if process.create_time() > record.started_at + 1.0:
            return None
    except psutil.Error:
        return None
    return process


def _wait_ended(files: HostFiles, process: psutil.Process | None, bound: float) -> bool:
    # Gone means both: the lock is free (no host serves) and the process has exited. A host
    # frees its lock on the way out and may still run seconds after (closing threads); a
    # zombie has exited (a container's init may never reap it).
    deadline = time.monotonic() + bound
    while True:
        if not is_held(files.lock) and (process is None or _exited(process)):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_SECONDS)


def _exited(process: psutil.Process) -> bool:
    try:
        return bool(process.status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False


def _reap_warm(workspace: Workspace) -> tuple[str, ...]:
    """A killed host never stopped its warm daemons: stop those no living process owns."""
    import anyio

    from agent_habitat.verify.rungs import dmypy, warm_pytest

    stopped: list[str] = []

    async def reap() -> None:
        if await dmypy.release(workspace):
            stopped.append("dmypy daemon")
        warm = warm_pytest.WarmPytest(workspace)
        if warm.record() is not None and warm.orphaned():
            await warm.stop_now()
            stopped.append("warm pytest")

    # A thread of its own: `stop_host` may be called where an event loop already runs.
    failed: list[BaseException] = []

    def run() -> None:
        try:
            anyio.run(reap)
        except BaseException as error:  # raised again in the caller's thread
            failed.append(error)

    thread = threading.Thread(target=run, name="habitat-reap-warm")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return tuple(stopped)


def probe_host(record: HostRecord, timeout: float = 2.0) -> dict[str, Any] | None:
    """The host's `/api/status`, or None when it does not answer within `timeout` (hung:
    stopped, deadlocked, or dying)."""
    from .plain_client import HostGone, PlainHost

    try:
        answer = PlainHost(record.pid, record.socket).ask("GET", "/api/status", timeout=timeout)
    except HostGone:
        return None
    status = answer.data
    if not 200 <= answer.status < 300 or not isinstance(status, dict):
        return None
    return status


def _tail(log: Path, lines: int = 5) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return f"(no log at {log})"
    return " | ".join(text.strip().splitlines()[-lines:]) or f"(empty log {log})"
