"""A spawner for tests: scripted commands instead of processes.

`FakeSpawner` implements `agent_habitat.proc.spawner.Spawner` for the shell habitat's
wrapper: a command's `Script` says what it prints, where it ends up (`cd`), what it
exports or unsets and its exit code. Playing it writes the output to the spool and the
wrapper's `state` file (exit code, cwd, environment) as a POSIX shell's wrapper would, and
exits. A script with `keep_running` stays alive until the test ends it (`FakeProcess.exit`)
or the habitat kills it, so waits, busy tabs and kills can be tested without a shell.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

import anyio
import anyio.lowlevel

from ..proc import KillReport, ProcessRecord

if TYPE_CHECKING:
    from ..proc.spawner import SpawnArgs

__all__ = ["FakeProcess", "FakeSpawner", "Script"]

# Above the kernel's largest pid (2**22), so a fake pid never names a real process.
_FIRST_PID = 10_000_000
# Names the real wrapper never carries (see shell/wrapper.py).
_NOT_CARRIED = frozenset({"_", "SHLVL", "PWD", "OLDPWD", "HABITAT_RUN_ID"})


@dataclass(frozen=True)
class Script:
    """What a scripted command does."""

    output: str = ""
    exit_code: int = 0
    cd: str | None = None
    """The folder it ends in, relative to the one it started in (`cd` in the command)."""
    export: Mapping[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()
    keep_running: bool = False
    """Print `output`, then run until `FakeProcess.exit()` or a kill."""


class _Stdin(io.BytesIO):
    """The write end of a fake process's stdin; keeps what it got after it was closed."""

    received = b""

    def close(self) -> None:
        if not self.closed:
            self.received = self.getvalue()
        super().close()


class FakeProcess:
    """One played command. Implements `agent_habitat.proc.spawner.ProcessHandle`."""

    def __init__(
        self,
        pid: int,
        argv: Sequence[str],
        command: str,
        cwd: Path,
        env: dict[str, str],
        output: Path,
        marker: str | None,
        stdin_pipe: bool,
    ) -> None:
        self.pid = pid
        self.argv = list(argv)
        self.command = command
        self.cwd = cwd
        """The folder it started in."""
        self.env = env
        """The environment it started with (the marker included)."""
        self.output = output
        self.record = ProcessRecord(pid, 0.0, marker)
        self.stdin: io.BytesIO | None = _Stdin() if stdin_pipe else None
        self.returncode: int | None = None
        self.signals: list[int] = []
        """Signals the habitat sent to its tree."""
        self.traps: dict[int, int] = {}
        """Signal → the exit code its shell's trap exits with (`trap 'exit 0' INT`)."""
        self._exited = anyio.Event()

    # what the test does
    def write(self, text: str) -> None:
        with open(self.output, "ab") as f:
            f.write(text.encode())

    def exit(
        self,
        code: int = 0,
        *,
        cd: str | None = None,
        export: Mapping[str, str] | None = None,
        unset: Sequence[str] = (),
    ) -> None:
        """End as the wrapper does: record exit code, final cwd and environment, then exit."""
        final_cwd = (self.cwd / cd).resolve() if cd is not None else self.cwd
        env = {k: v for k, v in self.env.items() if k not in _NOT_CARRIED}
        env.update(export or {})
        for name in unset:
            env.pop(name, None)
        dump = b"".join(f"{k}={v}\0".encode() for k, v in env.items())
        state = f"{code}\0{final_cwd}\0".encode() + dump
        (self.output.parent / "state").write_bytes(state)
        self._end(code)

    def die(self, sig: int) -> None:
        """Killed by `sig`: the wrapper records nothing."""
        self._end(-sig)

    def _end(self, returncode: int) -> None:
        if self.returncode is None:
            self.returncode = returncode
            self._exited.set()

    # what the habitat sees
    @property
    def stdin_received(self) -> bytes:
        """What was written to its stdin (once closed, or so far)."""
        if isinstance(self.stdin, _Stdin) and self.stdin.closed:
            return self.stdin.received
        return self.stdin.getvalue() if self.stdin is not None else b""

    def identify(self) -> ProcessRecord:
        if not self.record.create_time:
            self.record = ProcessRecord(self.pid, 1.0 + self.pid, self.record.marker)
        return self.record

    def alive(self) -> bool:
        return self.returncode is None

    async def wait(self) -> int | None:
        await self._exited.wait()
        return self.returncode


class _Adopted:
    """A fake process seen from another habitat: alive or not, but no return code."""

    def __init__(self, record: ProcessRecord, process: FakeProcess | None) -> None:
        self.record = record
        self.pid = record.pid
        self.stdin = None
        self._process = process

    def identify(self) -> ProcessRecord:
        return self.record

    def alive(self) -> bool:
        return self._process is not None and self._process.alive()

    async def wait(self) -> int | None:
        if self._process is not None:
            await self._process.wait()
        return None


class FakeSpawner:
    """Plays `scripts` (command line → Script); an unscripted command plays `default`, or
    fails the test with a LookupError naming it when there is no default."""

    keeps_spools = False
    """Its output is written by the test, not a process: no spool keeper."""

    def __init__(
        self, scripts: Mapping[str, Script] | None = None, *, default: Script | None = None
    ) -> None:
        self.scripts: dict[str, Script] = dict(scripts or {})
        self.default = default
        self.processes: list[FakeProcess] = []
        self.backgrounded: list[tuple[int, int]] = []
        """(pid, nice) of each run `make_background` lowered."""
        self.before_spawn: Callable[[Path], None] | None = None
        """Called with the spool path before anything starts (raise OSError: cannot start)."""
        self.after_spawn: Callable[[FakeProcess], None] | None = None
        """Called once the process runs (raise to play the habitat dying right then)."""
        self._pids = itertools.count(_FIRST_PID)

    @property
    def last(self) -> FakeProcess:
        """The most recently spawned process."""
        return self.processes[-1]

    def spawn(self, argv: Sequence[str], **args: Unpack[SpawnArgs]) -> FakeProcess:
        # `stdout` (a keeper's pipe: real spawners only get one) and `joins_group` play no
        # part in a script; the other defaults are `proc.supervised.spawn`'s.
        cwd, env, output = args["cwd"], args["env"], args["output"]
        stdin_pipe, marker = args.get("stdin_pipe", False), args.get("marker")
        if self.before_spawn is not None:
            self.before_spawn(output)
        command = _command_of(argv, output.parent)
        script = self.scripts.get(command, self.default)
        if script is None:
            known = ", ".join(repr(c) for c in self.scripts) or "none"
            raise LookupError(f"FakeSpawner has no script for {command!r} (scripted: {known})")
        if not cwd.is_dir():
            raise FileNotFoundError(f"no such directory: {cwd}")
        full_env = dict(env)
        if marker is not None:
            full_env["HABITAT_RUN_ID"] = marker
        output.parent.mkdir(parents=True, exist_ok=True)
        output.touch()
        process = FakeProcess(
            next(self._pids), argv, command, cwd, full_env, output, marker, stdin_pipe
        )
        if args.get("identify", True):
            process.identify()
        self.processes.append(process)
        if script.output:
            process.write(script.output)
        if not script.keep_running:
            process.exit(script.exit_code, cd=script.cd, export=script.export, unset=script.unset)
        if self.after_spawn is not None:
            self.after_spawn(process)
        return process

    def child(self, parent: FakeProcess) -> FakeProcess:
        """A process `parent` started: it carries the run's marker and runs until it is
        ended (`exit`, `die`) or killed, whatever becomes of its parent."""
        child = FakeProcess(
            next(self._pids),
            parent.argv,
            parent.command,
            parent.cwd,
            dict(parent.env),
            parent.output,
            parent.record.marker,
            False,
        )
        child.identify()
        self.processes.append(child)
        return child

    def _tree(self, record: ProcessRecord) -> list[FakeProcess]:
        return [
            p
            for p in self.processes
            if p.alive()
            and (p.pid == record.pid or (record.marker and p.record.marker == record.marker))
        ]

    def members(self, record: ProcessRecord) -> list[ProcessRecord]:
        return [p.identify() for p in self._tree(record)]

    def make_background(self, record: ProcessRecord, nice: int) -> list[str]:
        self.backgrounded.append((record.pid, nice))
        return [f"nice {nice}"]

    def sweep(self) -> None:
        """Fake processes belong to no cgroup: nothing a dead habitat left to clear."""

    async def prestart(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        marker: str,
        then: Callable[[], object] | None = None,
    ) -> None:
        """A script plays once its command is known: every run starts at its call."""

    def ended_alone(self, record: ProcessRecord) -> bool:
        """Fake processes have no cgroup: `members` always tells."""
        return False

    def release_group(self, record: ProcessRecord) -> None:
        """No cgroup to remove."""

    def adopt(self, record: ProcessRecord) -> _Adopted:
        found = next((p for p in self.processes if p.pid == record.pid), None)
        return _Adopted(record, found)

    async def kill_tree(self, record: ProcessRecord, sig: int, grace: float) -> KillReport:
        """Any signal ends a fake process and its children (they trap none), unless the
        process `traps` it: then it records the signal and exits as its trap says."""
        tree = self._tree(record)
        for found in tree:
            found.signals.append(sig)
            trap = found.traps.get(sig)
            if trap is not None:
                found.exit(trap)
            else:
                found.die(sig)
        await anyio.lowlevel.checkpoint()
        return KillReport(pids=[p.pid for p in tree], remaining=[])


def _command_of(argv: Sequence[str], run_dir: Path) -> str:
    # fish and pwsh wrappers read the command from a file; the POSIX ones take it last.
    for name in ("cmd", "cmd.ps1"):
        path = run_dir / name
        if path.is_file():
            return path.read_text(encoding="utf-8").removesuffix("\n")
    return argv[-1]
