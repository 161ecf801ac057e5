"""Run one rung process through `agent_habitat.proc`: spool, wait, kill the tree on
timeout or cancellation, and read back the output."""

from __future__ import annotations

import logging
import os
import secrets
import signal as signal_module
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import anyio
import anyio.to_thread

from ..proc import ProcessRecord, Supervised, cgroup, kill_tree, spawn
from ..proc.keepers import KEEPER_AFTER_SECONDS, drained, keeper_before, start_keeper
from ..proc.spool import Spool
from ..proc.spool_keeper import Budget
from . import stopping

_log = logging.getLogger(__name__)

__all__ = [
    "Begun",
    "Outcome",
    "answered",
    "begin_command",
    "child_env",
    "finish_command",
    "run_command",
    "spool_path",
    "take_report",
]

# Parsers read at most this much of a spool; the result keeps only `cap` bytes of its tail.
_PARSE_LIMIT = 8 * 1024 * 1024
_KEEPER_SHARE = 8
"""A run gets its keeper once its spool holds more than this share of its budget."""
_KEEP_SPOOLS = 200
_PRUNE_BATCH = 50
# Variables a test runner of ours would leak into the project's processes.
_LEAKY_PREFIXES = ("PYTEST_CURRENT_TEST", "PYTEST_XDIST_", "COV_CORE_", "HABITAT_RUN_ID")


@dataclass
class Outcome:
    argv: list[str]
    exit_code: int | None
    signal: str | None
    duration_s: float
    text: str
    """Output for the parsers (the first 8 MiB)."""
    tail: str
    truncated: bool
    spool: Path
    timed_out: bool = False


async def answered(
    argv: Sequence[str],
    exit_code: int,
    text: str,
    spool: Path,
    started: float,
    cap: int,
    *,
    encoding_errors: str = "strict",
) -> Outcome:
    """A warm server's answer (the warm tsc, a language server, the dmypy daemon) as the
    outcome of the command it stood in for: `text` written to `spool`, the last `cap` bytes as
    the tail, the time since `started` (a `time.monotonic()`) as its duration."""
    data = text.encode("utf-8", encoding_errors)
    await anyio.Path(spool).write_bytes(data)
    return Outcome(
        argv=list(argv),
        exit_code=exit_code,
        signal=None,
        duration_s=time.monotonic() - started,
        text=text,
        tail=data[-cap:].decode("utf-8", "replace"),
        truncated=len(data) > cap,
        spool=spool,
    )


def child_env(
    extra: Mapping[str, str] | None = None, bin_dir: Path | None = None
) -> dict[str, str]:
    """The habitat's environment for a project process, with the project env's bin first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_LEAKY_PREFIXES)}
    if bin_dir is not None:
        env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
        if (bin_dir.parent / "pyvenv.cfg").is_file():
            env["VIRTUAL_ENV"] = str(bin_dir.parent)
    env.update(extra or {})
    return env


def spool_path(spool_dir: Path, name: str) -> Path:
    """`spool_dir/verify-<name>`; the oldest verify spools beyond a few hundred are removed."""
    spool_dir.mkdir(parents=True, exist_ok=True)
    # Names only (no stat) on most calls: pruning waits for a batch of extra spools, since
    # stat-ing a few hundred files for every rung process cost ~30 ms each time.
    names = [e for e in os.scandir(spool_dir) if e.name.startswith("verify-")]
    if len(names) > _KEEP_SPOOLS + _PRUNE_BATCH:
        olds = sorted(names, key=_mtime)
        for old in olds[: len(olds) - _KEEP_SPOOLS]:
            Path(old.path).unlink(missing_ok=True)
    return spool_dir / f"verify-{name}"


def _take(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    finally:
        path.unlink(missing_ok=True)


async def take_report(path: Path) -> str:
    """The text of a report file a tool wrote (`--output-file`), removed once read; '' when
    the tool wrote none. One worker thread for both (a hand-off costs more than the work on
    a busy machine)."""
    return await anyio.to_thread.run_sync(_take, path)


async def _wait(sup: Supervised, spool: Path, budget: Budget | None) -> int | None:
    """The process's exit code; a keeper starts for it once it has written a share of its
    budget (`_KEEPER_SHARE`: the spool's size is looked at every KEEPER_AFTER_SECONDS), or
    once it has ended when it wrote more than half its budget meanwhile (the keeper cuts it,
    then exits).

    A keeper is an interpreter's start (~10 ms of CPU, 0.15–0.2 s of wall at load 20), and
    a run that writes little never needs one: `ruff` on one file (a comment's verify) ran
    past the first look under load and paid it every time. A writer at 1 GB/s puts ~50 MB
    in its spool between two looks, well within the room `keepers.pump_needed` leaves for a
    keeper that starts late. The keeper's start runs beside the wait, not before it: a run
    that ends meanwhile is answered at once, unless it wrote more than half its budget,
    which the keeper must cut first. A keeper that starts after its run ended finds no
    writer and exits."""
    if budget is None:
        return await sup.wait()
    code: int | None = None
    while True:
        with anyio.move_on_after(KEEPER_AFTER_SECONDS) as early:
            code = await sup.wait()
        if not early.cancelled_caught:
            if Spool(spool).size() > budget.run_bytes // 2:
                await _start_keeper(spool, budget)
            return code
        if Spool(spool).size() > budget.run_bytes // _KEEPER_SHARE:
            break
    started = anyio.Event()

    async def keeper() -> None:
        try:
            await _start_keeper(spool, budget, abandon=True)
        finally:
            started.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(keeper)
        code = await sup.wait()
        if not started.is_set() and Spool(spool).size() <= budget.run_bytes // 2:
            tg.cancel_scope.cancel()  # its thread ends on its own: nothing waits for it
    return code


async def _start_keeper(spool: Path, budget: Budget, *, abandon: bool = False) -> None:
    try:
        await anyio.to_thread.run_sync(start_keeper, spool, budget, abandon_on_cancel=abandon)
    except OSError as exc:
        _log.warning("no keeper for %s: %s", spool, exc)


def _keeper_before(spool: Path, budget: Budget) -> int | None:
    try:
        return keeper_before(spool, budget)
    except OSError as exc:
        _log.warning("no keeper for %s: %s", spool, exc)
        return None


def _mtime(entry: os.DirEntry[str]) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:
        return 0.0


def _read(path: Path, cap: int) -> tuple[str, str, bool]:
    spool = Spool(path)
    return (
        spool.head(_PARSE_LIMIT).decode("utf-8", "replace"),
        spool.tail(cap).decode("utf-8", "replace"),
        spool.size() > cap,
    )


def _stopped_by_the_climb(exc: BaseException, sup: Supervised) -> bool:
    """A rung the climb stops as it ends at a red (`verify.stopping`): its process group gets
    SIGTERM now, the rest of the kill and the reaping come after the verdict."""
    climb = stopping.current()
    if climb is None or not climb.ending or not isinstance(exc, anyio.get_cancelled_exc_class()):
        return False
    popen = sup.popen
    if popen is not None and popen.poll() is None:  # not reaped: its pid is still its own
        try:
            os.killpg(sup.pid, signal_module.SIGTERM)
        except OSError:
            pass  # gone, or not a group leader: kill_tree finds its members
    climb.later.append(partial(_kill_now, sup))
    return True


def _ended_alone(marker: str) -> bool:
    """Whether nothing of the run outlived its process, known from its cgroup (born inside
    it: `spawn`'s `enter_group`) with one read; its empty group is removed then. False
    where it has no such group: `kill_tree` looks for what it left."""
    if not cgroup.emptied(marker):
        return False
    cgroup.remove(marker)
    return True


async def _kill_now(sup: Supervised) -> None:
    await kill_tree(sup.record)
    await sup.wait()


async def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    spool: Path,
    limit_s: float,
    cap: int,
    reap_leftovers: bool = True,
    on_spawn: Callable[[ProcessRecord], None] | None = None,
    budget: Budget | None = None,
) -> Outcome:
    """Run `argv` to its end; kill its whole tree after `limit_s` or when cancelled.

    With `reap_leftovers`, whatever the process left running (background servers, stray
    children) is killed once it exits; a command that starts a daemon on purpose passes
    False. `on_spawn` hears the process record at once (the verify runner kills by it).
    With `budget`, the spool is held to it as a shell run's is (docs/spool.md): by a
    keeper started before the command on a short disk, else once it has run a moment.
    """
    marker = f"verify-{secrets.token_hex(6)}"
    started = time.monotonic()
    holder = None
    if budget is not None:
        holder = await anyio.to_thread.run_sync(_keeper_before, spool, budget)
    try:
        # outlive=False: a rung dies with its host (proc/cgroup.py sweeps a dead host's).
        sup = spawn(
            list(argv),
            cwd=cwd,
            env=env,
            output=spool,
            marker=marker,
            outlive=False,
            stdout=holder,
            enter_group=True,
        )
    finally:
        if holder is not None:
            os.close(holder)  # the command holds the pipe now: the keeper pumps it
    if on_spawn is not None:
        on_spawn(sup.record)
    return await finish_command(
        Begun(list(argv), sup, marker, started, spool),
        limit_s=limit_s,
        cap=cap,
        reap_leftovers=reap_leftovers,
        budget=None if holder is not None else budget,
        drain=holder is not None,
    )


@dataclass(frozen=True)
class Begun:
    """A rung's command spawned and not yet waited for (`begin_command`)."""

    argv: list[str]
    sup: Supervised
    marker: str
    started: float
    """Its `time.monotonic()` at the spawn."""
    spool: Path


def begin_command(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], spool: Path) -> Begun:
    """Blocking: `argv` spawned as `run_command` spawns it (its own group and cgroup,
    output into `spool`), for `finish_command` to wait for: a command begun before the climb
    that takes it over knows it will want it (a one-shot verify's type check). OSError when
    it could not start."""
    marker = f"verify-{secrets.token_hex(6)}"
    started = time.monotonic()
    sup = spawn(
        list(argv), cwd=cwd, env=env, output=spool, marker=marker, outlive=False, enter_group=True
    )
    return Begun(list(argv), sup, marker, started, spool)


async def finish_command(
    begun: Begun,
    *,
    limit_s: float,
    cap: int,
    reap_leftovers: bool = True,
    budget: Budget | None = None,
    drain: bool = False,
) -> Outcome:
    """The outcome of a command begun (`run_command`'s second half): waited for until
    `limit_s` after its spawn, its whole tree killed then or when cancelled."""
    sup, marker, spool = begun.sup, begun.marker, begun.spool
    timed_out = False
    try:
        left = max(0.0, limit_s - (time.monotonic() - begun.started))
        with anyio.move_on_after(left) as scope:
            code = await _wait(sup, spool, budget)
        if scope.cancelled_caught:
            timed_out = True
            await kill_tree(sup.record)
            code = await sup.wait()
        elif reap_leftovers and not _ended_alone(marker):
            await kill_tree(sup.record)
        if drain:
            await drained(spool)  # what its pump has not yet copied into the spool
    except BaseException as exc:
        if _stopped_by_the_climb(exc, sup):
            raise
        # Cancelled (or anything else): the process tree must not outlive the request.
        with anyio.CancelScope(shield=True):
            await kill_tree(sup.record)
            await sup.wait()
        raise
    text, tail, truncated = _read(spool, cap)
    sig = None
    if code is not None and code < 0 and not timed_out:
        try:
            sig = signal_module.Signals(-code).name
        except ValueError:
            sig = f"signal {-code}"
    return Outcome(
        argv=begun.argv,
        exit_code=code,
        signal=sig,
        duration_s=time.monotonic() - begun.started,
        text=text,
        tail=tail,
        truncated=truncated,
        spool=spool,
        timed_out=timed_out,
    )
