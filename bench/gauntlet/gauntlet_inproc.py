"""Gauntlet scenarios that need no server process: a habitat opened in this process.

Each returns its figures (a dict); `gauntlet.py` prints and checks them.
"""

from __future__ import annotations

import functools
import os
import random
import stat
import statistics
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
from gauntlet_wire import poll_until

from agent_habitat.config import ShellConfig
from agent_habitat.habitat import Habitat
from agent_habitat.proc import cgroup, kill_tree, members
from agent_habitat.shell.models import (
    CloseArgs,
    KillArgs,
    LastArgs,
    RunArgs,
    SceneResult,
    WaitArgs,
)
from agent_habitat.workspace import Workspace

Figures = dict[str, Any]


def _open(project: Path) -> Any:
    return Habitat.open(
        Workspace.for_project(project), project=project, config=ShellConfig(kill_grace_seconds=0.5)
    )


def _alive(argv: list[str]) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if proc.info["cmdline"] == argv and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


def _any_alive(argv: list[str]) -> bool:
    return bool(_alive(argv))


def _none_alive(argv: list[str]) -> bool:
    return not _alive(argv)


def _kill_strays(argvs: list[list[str]]) -> int:
    """SIGKILL what a scenario left (counted first): the gauntlet itself leaves nothing."""
    left = 0
    for argv in argvs:
        for proc in _alive(argv):
            left += 1
            proc.kill()
    return left


async def leftovers(project: Path, rng: random.Random, rounds: int) -> Figures:
    """Daemons a run leaves (`setsid`, `env -i`, `cmd &`): said in the result, stopped by
    kill/close. Figures: runs that left something and said so, processes left after."""
    said = left_unsaid = 0
    argvs: list[list[str]] = []
    untracked: set[str] = set()
    async with _open(project) as habitat:
        shell = habitat.shell
        for n in range(rounds):
            seconds = str(40000 + n)
            shape = rng.choice(["setsid", "env-i", "background"])
            command = {
                "setsid": f"(setsid sh -c 'sleep {seconds}' &); echo started",
                "env-i": f"(setsid env -i /bin/sleep {seconds} &); echo started",
                "background": f"sleep {seconds} & echo started",
            }[shape]
            argv = ["/bin/sleep" if shape == "env-i" else "sleep", seconds]
            argvs.append(argv)
            tab = f"g{n % 4}"
            result = await shell.run(RunArgs(command=command, tab=tab))
            await poll_until(functools.partial(_any_alive, argv), within=20)
            if any(seconds in p.command for p in result.left_running):
                said += 1
            else:
                left_unsaid += 1
            how = rng.choice(["kill", "close"])
            if how == "kill":
                killed = await shell.kill(KillArgs(tab=tab))
                if killed.untracked:
                    untracked.add(killed.untracked)
            else:
                await shell.close(CloseArgs(tab=tab))
            await poll_until(functools.partial(_none_alive, argv), within=5)
    left = _kill_strays(argvs)
    return {
        "runs that left daemons": rounds,
        "said so (left_running)": said,
        "left unsaid": left_unsaid,
        "processes left": left,
        "tracking": cgroup.tracking(),
        "untracked notes": len(untracked),
    }


async def catastrophic_regex(project: Path, rng: random.Random, calls: int) -> Figures:
    """`(a+)+$`-style patterns in `last grep` and `wait until`: answered (result or a tool
    error naming the argument) while the loop keeps serving."""
    patterns = ["(a+)+$", "(a|aa)+$", "(a*)*b", "(x+x+)+y", "^(a+)+!$"]
    answered = slowest = 0.0
    async with _open(project) as habitat:
        shell = habitat.shell
        await shell.run(RunArgs(command=f"printf '{'a' * 30}!\\n%.0s' 1 2 3"))
        for _ in range(calls):
            pattern = rng.choice(patterns)
            started = time.monotonic()
            try:
                if rng.random() < 0.5:
                    await shell.last(LastArgs(grep=pattern))
                else:
                    await shell.wait(WaitArgs(until=pattern, timeout_seconds=1))
            except Exception as exc:  # a tool error is an answer; its type is checked below
                if "grep" not in str(exc) and "until" not in str(exc):
                    raise
            answered += 1
            slowest = max(slowest, time.monotonic() - started)
    return {"regex calls": calls, "answered": int(answered), "slowest answer s": round(slowest, 2)}


def _secret_leaks(home: Path, secret: str) -> tuple[int, int]:
    """(files or folders open to others, files holding the secret's value)."""
    open_to_others = holding = 0
    for path in [home, *home.rglob("*")]:
        if path.is_symlink() or not path.exists():
            continue
        mode = path.stat().st_mode
        if path.is_socket():
            continue
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            open_to_others += 1
        if path.is_file():
            try:
                if secret.encode() in path.read_bytes():
                    holding += 1
            except OSError:
                continue
    return open_to_others, holding


async def secrets_at_rest(project: Path, home: Path, runs: int) -> Figures:
    secret = "gauntlet-" + os.urandom(8).hex()
    os.environ["GAUNTLET_API_TOKEN"] = secret
    try:
        async with _open(project) as habitat:
            for n in range(runs):
                await habitat.shell.run(RunArgs(command=f"export N={n}; true", tab="s"))
    finally:
        del os.environ["GAUNTLET_API_TOKEN"]
    open_to_others, holding = _secret_leaks(home, secret)
    return {"state paths open to others": open_to_others, "files holding the secret": holding}


async def spool_accounting(project: Path, rng: random.Random, runs: int) -> Figures:
    """Bytes a run wrote vs what its spool holds and its result accounts for: the spool may
    keep less (a budget), never lose count (kept + omitted = written)."""
    written = kept = unaccounted = 0
    async with _open(project) as habitat:
        for _ in range(runs):
            size = rng.randrange(1, 8) * 1_000_000
            result = await habitat.shell.run(RunArgs(command=f"head -c {size} /dev/zero"))
            spool = Path(result.spool).stat().st_size
            written += size
            kept += spool
            unaccounted += abs(size - result.output_bytes)
    return {"bytes written": written, "spool bytes": kept, "bytes unaccounted": unaccounted}


async def scene_under_load(project: Path, writers: int, calls: int) -> Figures:
    """`scene` latency while tabs write at full speed (the target is the spool engineer's:
    p99 ≤ 100 ms; here it is measured, not asserted)."""
    samples: list[float] = []
    async with _open(project) as habitat:
        shell = habitat.shell
        for n in range(writers):
            await shell.run(
                RunArgs(command="yes gauntlet | head -c 200000000", tab=f"w{n}", background=True)
            )
        for _ in range(calls):
            started = time.perf_counter()
            scene: SceneResult = await shell.scene()
            samples.append((time.perf_counter() - started) * 1000)
            assert len(scene.tabs) >= writers
            await anyio.sleep(0.01)
        for n in range(writers):
            await shell.close(CloseArgs(tab=f"w{n}"))
        for row in habitat.db.query("SELECT id FROM runs"):
            run = habitat.shell.store.get(row["id"])
            if run is not None and run.record is not None and members(run.record):
                await kill_tree(run.record, grace=0.2)
    samples.sort()
    return {
        "scene calls": calls,
        "writers": writers,
        "scene p50 ms": round(statistics.median(samples), 1),
        "scene p99 ms": round(samples[min(len(samples) - 1, int(len(samples) * 0.99))], 1),
    }
