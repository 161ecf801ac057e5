"""Spawn a process into its own session with output to a spool file, and wait for it.

Output goes to a file, never to a pipe the habitat holds, so a run survives the death
of the habitat process that started it; a later habitat adopts it by its record.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from . import cgroup
from .record import ProcessRecord, is_alive, process_create_time

__all__ = ["MARKER_ENV", "Prestarted", "Supervised", "prestart", "spawn"]

MARKER_ENV = "HABITAT_RUN_ID"

# Fallback poll interval where pidfd is missing (macOS, old kernels).
_POLL_SECONDS = 0.05
_HAS_PIDFD = hasattr(os, "pidfd_open") and sys.platform.startswith("linux")

# Every child we started and have not reaped. A run outlives the habitat object that
# started it; holding the Popen here keeps it from being collected while the child runs
# (which would warn), and lets a later spawn reap it once it has exited (no zombies).
_UNREAPED: set[subprocess.Popen[bytes]] = set()


# Signals a command must be able to trap or be stopped by. A disposition of SIG_IGN survives
# exec, and a non-interactive shell cannot even trap a signal it inherited as ignored, so a
# habitat started under `nohup`, by `cmd &` in a script, or by a client that ignores SIGINT
# would hand every command deaf ears: `kill --signal INT` would do nothing.
_CHILD_DEFAULT_SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGQUIT", "SIGHUP", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGALRM")
    if hasattr(signal, name)
)
_signals_prepared = False
_swept = False


def _keep_ignoring(signum: int, frame: object) -> None:
    """Stands in for SIG_IGN in this process (see `prepare_child_signals`)."""


def prepare_child_signals() -> None:
    """Let the commands we start handle signals this process inherited as ignored.

    A signal that is caught (has a handler) is reset to its default by exec, unlike an
    ignored one. Catching the inherited-ignored ones with a handler that does nothing keeps
    this process ignoring them while every child starts with the default disposition — no
    per-spawn cost and no `preexec_fn` (unsafe with threads). Only the main thread may set
    handlers; the first spawn from it does this once.
    """
    global _signals_prepared
    if _signals_prepared or threading.current_thread() is not threading.main_thread():
        return
    for signum in _CHILD_DEFAULT_SIGNALS:
        if signal.getsignal(signum) == signal.SIG_IGN:
            signal.signal(signum, _keep_ignoring)
    _signals_prepared = True


def _reap_exited() -> None:
    for popen in list(_UNREAPED):
        if popen.poll() is not None:
            _UNREAPED.discard(popen)


class Supervised:
    """A process started by `spawn` (our child) or adopted from a record (not our child)."""

    def __init__(self, record: ProcessRecord, popen: subprocess.Popen[bytes] | None = None) -> None:
        self.record = record
        self.popen = popen

    @property
    def pid(self) -> int:
        return self.record.pid

    @property
    def stdin(self) -> IO[bytes] | None:
        return self.popen.stdin if self.popen else None

    def identify(self) -> ProcessRecord:
        """Fill in the create time (our unreaped child cannot vanish, so it is readable)."""
        if self.record.create_time == 0.0:
            created = process_create_time(self.pid)
            if created is not None:
                self.record = ProcessRecord(self.pid, created, self.record.marker)
        return self.record

    @classmethod
    def adopt(cls, record: ProcessRecord) -> Supervised:
        """A handle on a process started by an earlier habitat; `wait` cannot know its code."""
        return cls(record, None)

    @property
    def returncode(self) -> int | None:
        return self.popen.poll() if self.popen else None

    def alive(self) -> bool:
        if self.popen is not None:
            return self.popen.poll() is None
        return is_alive(self.record)

    def wait_within(self, seconds: float) -> int | None:
        """Our child's return code if it exits within `seconds` (blocking, no event loop: a
        one-shot run with no host, `shell.quiet_run`); None while it runs. Adopted: None."""
        if self.popen is None:
            return None
        if self.popen.poll() is None:
            if _HAS_PIDFD:
                import select

                try:
                    fd = os.pidfd_open(self.pid)
                except ProcessLookupError:
                    fd = -1
                if fd >= 0:
                    try:
                        select.select([fd], [], [], seconds)
                    finally:
                        os.close(fd)
            else:
                try:
                    self.popen.wait(seconds)
                except subprocess.TimeoutExpired:
                    return None
            if self.popen.poll() is None:
                return None
        _UNREAPED.discard(self.popen)
        return self.popen.returncode

    async def wait(self) -> int | None:
        """Wait for exit. Our child: its returncode (negative = signal). Adopted: None."""
        import anyio  # here: a one-shot run with no host spawns and waits without it

        if self.popen is not None and self.popen.poll() is not None:
            return self.popen.returncode
        if self.popen is None and not is_alive(self.record):
            return None
        if _HAS_PIDFD:
            try:
                fd = os.pidfd_open(self.pid)
            except ProcessLookupError:
                fd = -1
            if fd >= 0:
                try:
                    await anyio.wait_readable(fd)
                finally:
                    os.close(fd)
        else:
            while self.alive():  # noqa: ASYNC110 - no pidfd: polling is all the OS offers
                await anyio.sleep(_POLL_SECONDS)
        if self.popen is not None:
            # The pidfd is readable once the child exited, so this reaps without blocking.
            code = self.popen.wait()
            _UNREAPED.discard(self.popen)
            return code
        return None


def spawn(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    output: Path,
    stdin_pipe: bool = False,
    marker: str | None = None,
    identify: bool = True,
    outlive: bool = True,
    stdout: int | None = None,
    joins_group: bool = False,
    enter_group: bool = False,
) -> Supervised:
    """Start `argv` in a new session; stdout and stderr interleaved into `output` (appended).

    `outlive=False`: the process (a verify rung) must not outlive this one; where runs get
    cgroups, the next habitat process kills it if this one died first (`cgroup.sweep`).

    With `identify=False` the create time is read later by `identify()`: right after fork,
    reading /proc/<pid>/stat can block for a millisecond until the child's exec completes,
    which a caller on the fast path may prefer to do off the event loop.

    `stdout`: a descriptor the output goes to instead (a keeper's pipe, see
    `keepers.keeper_before`); the caller keeps and closes its own.

    `joins_group`: `argv` moves itself into its cgroup (`cgroup.CGROUP_ENV`) before it can
    fork, as the POSIX wrapper shells do (see `cgroup.place`).

    `enter_group`: where the run gets a cgroup, `argv` is started by `/bin/sh`, whose first
    builtin moves it into the group before it execs `argv` (same pid, same session): the
    run is born inside its group, so `cgroup.emptied` tells its end with one read where
    `kill_tree` scanned every process on the machine twice (a verify rung's end, 30-70 ms
    of wall at load 20 on the way to every verdict). Not when `argv[0]` is not an
    executable that `Popen` would find: `Popen` then raises for it as it always did.
    """
    global _swept
    prepare_child_signals()
    _reap_exited()
    if not _swept:
        _swept = True
        cgroup.sweep()
    output.parent.mkdir(parents=True, exist_ok=True)
    full_env = dict(env)
    if marker is not None:
        full_env[MARKER_ENV] = marker
        group = cgroup.prepare(marker, owned=not outlive)
        if group is not None:
            full_env[cgroup.CGROUP_ENV] = str(group)
            if enter_group and (entering := _entering(argv, cwd, full_env)) is not None:
                argv, joins_group = entering, True
    fd = (
        stdout
        if stdout is not None
        else os.open(output, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    )
    try:
        popen = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=full_env,
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=fd,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        if stdout is None:
            os.close(fd)
    _UNREAPED.add(popen)
    if marker is not None:
        # At once (a wrapper shell also moves itself in first thing, see `cgroup.prepare`).
        cgroup.place(marker, popen.pid, joins_itself=joins_group)
    sup = Supervised(ProcessRecord(popen.pid, 0.0, marker), popen)
    if identify:
        sup.identify()
    return sup


_SH = "/bin/sh"
_ENTER = '{ echo $$ >"$HABITAT_CGROUP/cgroup.procs"; } 2>/dev/null; exec "$@"'
"""The shell's script: into the group first (as the wrapper shells do), then `argv`."""


def _entering(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> list[str] | None:
    """`argv` started by `/bin/sh` through `_ENTER`; None where Popen itself must answer:
    no `/bin/sh`, or an `argv[0]` that is not an executable file, where Popen looks for it
    (under `cwd` for a path, else on `env`'s PATH, as `os.get_exec_path` reads it)."""
    if not argv or not os.access(_SH, os.X_OK):
        return None
    program = os.fspath(argv[0])
    if program.startswith("-"):
        return None  # `exec -x` would be an option to the shell's exec
    if os.path.dirname(program):
        found = os.path.join(cwd, program)
        if not (os.path.isfile(found) and os.access(found, os.X_OK)):
            return None
    elif shutil.which(program, path=os.pathsep.join(os.get_exec_path(env))) is None:
        return None
    return [_SH, "-c", _ENTER, program, *argv]


@dataclass
class Prestarted:
    """A process started ahead of its run (`prestart`), waiting for one line on its stdin."""

    process: Supervised
    go: int
    """The write end of its stdin: the line it waits for, or its close (then it exits)."""
    born_inside: bool
    """Its cgroup held it before it ran anything (`cgroup.emptied` may vouch for its run)."""


def prestart(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], marker: str) -> Prestarted:
    """Start `argv` (a wrapper that reads one line from its stdin before anything else) in a
    new session, placed in the run's cgroup and identified before this returns, so that a
    run's start is one write to `go` instead of a fork, an exec and a cgroup move. Its
    stdout and stderr are /dev/null until it redirects them itself; it exits when `go` is
    closed unwritten (the habitat chose another, or died). Blocks for milliseconds: call it
    off the event loop, after `prepare_child_signals` on the main thread."""
    _reap_exited()
    full_env = dict(env)
    full_env[MARKER_ENV] = marker
    group = cgroup.prepare(marker)
    if group is not None:
        full_env[cgroup.CGROUP_ENV] = str(group)
    read_end, go = os.pipe()
    try:
        popen = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=full_env,
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except BaseException:
        os.close(go)
        raise
    finally:
        os.close(read_end)
    _UNREAPED.add(popen)
    # It waits on its stdin until `go` is written: placed now, it forks nothing before.
    born_inside = group is not None and cgroup.place(marker, popen.pid, first=True)
    sup = Supervised(ProcessRecord(popen.pid, 0.0, marker), popen)
    sup.identify()
    return Prestarted(sup, go, born_inside)
