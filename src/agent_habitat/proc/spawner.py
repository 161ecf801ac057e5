"""The seam between a service and the operating system's processes.

A service that starts processes (a shell tab, later a rung) takes a `Spawner` and holds
`ProcessHandle`s; `ProcSpawner` is the real one, built on `spawn`, `Supervised.adopt` and
`kill_tree`. Unit tests pass `agent_habitat.testing.FakeSpawner`, which plays scripted
commands without starting anything.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, NotRequired, Protocol, TypedDict, Unpack

from ..lazy import lazy_module
from . import cgroup
from .kill import KillReport, kill_tree, members
from .priority import make_background
from .record import ProcessRecord
from .supervised import Prestarted, Supervised, prepare_child_signals, prestart, spawn

if TYPE_CHECKING:
    import psutil
else:
    psutil = lazy_module("psutil")  # proc/ calls it in a few places: loaded when one runs

__all__ = ["ProcSpawner", "ProcessHandle", "SpawnArgs", "Spawner"]


class SpawnArgs(TypedDict):
    """What `Spawner.spawn` takes besides the command line, written once for the seam and
    each spawner (`proc.supervised.spawn` gives the defaults)."""

    cwd: Path
    env: Mapping[str, str]
    output: Path
    """stdout and stderr are appended here (unless `stdout` is given)."""
    stdin_pipe: NotRequired[bool]
    """Keep a pipe to its stdin (`ProcessHandle.stdin`); default False."""
    marker: NotRequired[str | None]
    """`HABITAT_RUN_ID` in its environment, which finds its tree again; default None."""
    identify: NotRequired[bool]
    """Read its create time at once (blocks briefly); default True."""
    stdout: NotRequired[int | None]
    """A descriptor its output goes to instead of `output` (a spool keeper's pipe)."""
    joins_group: NotRequired[bool]
    """It moves itself into its cgroup first thing; default False."""


class ProcessHandle(Protocol):
    """A process we started, or adopted from its record (what `Supervised` offers)."""

    @property
    def record(self) -> ProcessRecord: ...

    @property
    def pid(self) -> int: ...

    @property
    def stdin(self) -> IO[bytes] | None:
        """The write end of its stdin when started with `stdin_pipe` by this process."""

    def identify(self) -> ProcessRecord:
        """The record with the create time filled in (blocks briefly: call it off the loop)."""

    def alive(self) -> bool: ...

    async def wait(self) -> int | None:
        """Until it exits. Started here: its return code (negative: the signal). Adopted: None."""


class Spawner(Protocol):
    """Starts processes, finds them again by their record, and kills their whole tree."""

    @property
    def keeps_spools(self) -> bool:
        """Whether its processes write a real spool that a keeper process holds to its
        budget (`proc.keepers`), a keeper that may pump their output (`spawn`'s `stdout`).
        A fake's scripted output needs none."""

    def spawn(self, argv: Sequence[str], **args: Unpack[SpawnArgs]) -> ProcessHandle:
        """Start `argv` in a new session, stdout and stderr appended to `output` (or written
        to the descriptor `stdout`, a spool keeper's pipe). `joins_group`: `argv` moves
        itself into its cgroup first thing (see `proc.supervised.spawn`). Raises OSError
        when it cannot be started."""

    async def prestart(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        marker: str,
        then: Callable[[], object] | None = None,
    ) -> Prestarted | None:
        """Start `argv` ahead of its run, waiting for a line on its stdin (see
        `proc.supervised.prestart`); None where this spawner cannot (a fake's scripts). Raises
        OSError when it cannot be started. `then`: more blocking work, done once the process
        is started in the same worker thread (no second hand-off), never on the event loop
        (the run folder made ahead: file creations that wait milliseconds on a busy disk)."""

    def ended_alone(self, record: ProcessRecord) -> bool:
        """Whether nothing of the run `record` names lives any more, known without a scan (a
        prestarted run's cgroup is empty, `proc.cgroup.emptied`). False when only `members`
        can tell. Quick enough for the event loop; the empty group stays until
        `release_group`."""

    def release_group(self, record: ProcessRecord) -> None:
        """Remove the run's cgroup once `ended_alone` found it empty. Blocks while another
        process moves processes between cgroups (milliseconds): off the event loop, after
        the run's answer."""

    def adopt(self, record: ProcessRecord) -> ProcessHandle:
        """A handle on a process started earlier, perhaps by another habitat process."""

    async def kill_tree(self, record: ProcessRecord, sig: int, grace: float) -> KillReport:
        """Signal every member of the process's tree; see `proc.kill.kill_tree`."""

    def sweep(self) -> None:
        """Clear what dead habitat processes left that must not outlive them (see
        `proc.cgroup.sweep`); called when a habitat opens over the workspace's state."""

    def members(self, record: ProcessRecord) -> list[ProcessRecord]:
        """The live processes of the run `record` names (its cgroup, session, children,
        marker), with their command lines, even after its leader is gone; see
        `proc.kill.members`. Blocks briefly."""

    def make_background(self, record: ProcessRecord, nice: int) -> list[str]:
        """Lower the run `record` names to `nice` (`proc.priority.make_background`): its
        processes now and what they fork later. What was applied. Blocks briefly."""


class ProcSpawner:
    """Real processes."""

    keeps_spools = True

    def spawn(self, argv: Sequence[str], **args: Unpack[SpawnArgs]) -> Supervised:
        return spawn(argv, **args)

    async def prestart(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        marker: str,
        then: Callable[[], object] | None = None,
    ) -> Prestarted:
        import anyio.to_thread  # here: `spawn` serves a process without an event loop

        prepare_child_signals()  # on the loop's (main) thread, before the worker's fork

        def start() -> Prestarted:
            started = prestart(argv, cwd=cwd, env=env, marker=marker)
            if then is not None:
                try:
                    then()
                except BaseException:
                    os.close(started.go)  # it exits at EOF on its stdin, unused
                    raise
            return started

        return await anyio.to_thread.run_sync(start)

    def ended_alone(self, record: ProcessRecord) -> bool:
        return record.marker is not None and cgroup.emptied(record.marker)

    def release_group(self, record: ProcessRecord) -> None:
        if record.marker is not None:
            cgroup.remove(record.marker)  # as `members` does when it finds none

    def adopt(self, record: ProcessRecord) -> Supervised:
        return Supervised.adopt(record)

    async def kill_tree(self, record: ProcessRecord, sig: int, grace: float) -> KillReport:
        return await kill_tree(record, sig, grace)

    def sweep(self) -> None:
        cgroup.sweep()

    def make_background(self, record: ProcessRecord, nice: int) -> list[str]:
        return make_background([proc.pid for proc in members(record)], nice)

    def members(self, record: ProcessRecord) -> list[ProcessRecord]:
        found: list[ProcessRecord] = []
        for proc in members(record):
            with contextlib.suppress(psutil.Error):
                command = shlex.join(proc.cmdline()) or proc.name()
                found.append(ProcessRecord(proc.pid, proc.create_time(), record.marker, command))
        if not found and record.marker is not None:
            cgroup.remove(record.marker)  # the run is over, all of it: its empty group goes
        return found
