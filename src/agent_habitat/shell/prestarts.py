"""Prestarts: each tab's next wrappers (two), started in the lull after its last run's answer
(`lull`; as a run begins when none waits), so that the next run starts with one write
instead of a fork, an exec and a cgroup move; and the run folder each of them will get,
made with its files then too, by the worker thread that started it (`next-<pid>-<marker>`
in the spool folder), so that the run
renames one folder instead of making a folder and three files (each a new inode, 0.3-1 ms
of the answer's path on a busy disk: `bench/latency/mcp_latency.py`).

Every run still gets a process of its own, in a session and a cgroup of its own (DESIGN
§2): a prestarted wrapper is that process, started early and told its run folder later
(`wrapper.prestart_argv`). Its cgroup holds it before it runs anything, so its run's end
needs no process scan when the group is empty (`Spawner.ended_alone`). It is used only for
a run that would have started it exactly so (the same shell, folder, not only the same
path, and environment, not interactive); any other run closes it (it exits at EOF on its
stdin) and starts cold. A habitat that closes or dies closes them all the same way.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import secrets
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from ..proc.spawner import Spawner
from ..proc.spool_hole import prepare
from ..proc.supervised import Prestarted
from .shells import ShellInfo
from .wrapper import RunFiles, prestart_argv

__all__ = ["Prestarts", "Ready"]

logger = logging.getLogger(__name__)

# How long a run waits for its tab's prestart still under way (mostly done: it began after
# the last answer, or as the last run began) before it starts cold instead.
_PENDING_BOUND = 1.0
# Ready wrappers kept per tab: a call right behind the last answer takes the second while
# the next one is still being started (a cgroup move waits milliseconds on a busy machine).
_KEPT = 2
# A run folder made ahead is `next-<habitat pid>-<marker>` until its run renames it
# `run-<id>` (nothing reads `next-` folders as runs' spools: those are `run-`).
_AHEAD = "next-"


@dataclass(frozen=True)
class _Key:
    shell: str
    cwd: str
    folder: tuple[int, int]
    """The cwd's (device, inode): a folder removed and made again is another folder."""


@dataclass
class Ready:
    """A tab's prestarted wrapper, for the run that takes it (`Prestarts.take`)."""

    started: Prestarted
    key: _Key
    env: dict[str, str]
    marker: str
    folder: Path | None = None
    """Its run's folder, made ahead (`move_folder`); None when there is none (any more)."""

    def move_folder(self, run_dir: Path) -> bool:
        """Make the folder made ahead the run's `run_dir`: one rename. False when there is
        none (the caller makes the run's folder itself); anything at `run_dir` belongs to no
        run of this database (as `Shell` makes a folder) and goes."""
        folder, self.folder = self.folder, None
        if folder is None:
            return False
        for _ in range(2):
            try:
                os.rename(folder, run_dir)
                return True
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    break  # gone (a sweep took it), or the spool folder is
                shutil.rmtree(run_dir, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)
        return False


def _make_ahead(spool_dir: Path, marker: str) -> Path | None:
    """The folder of the run a prestarted wrapper will start, with the files a run's start
    makes (`output` and `state`, private, and the spare of its hole record), made before
    the run is asked for; None when it cannot be made now (the run makes its own)."""
    folder = spool_dir / f"{_AHEAD}{os.getpid()}-{marker}"
    try:
        try:
            os.mkdir(folder, 0o700)
        except FileNotFoundError:
            folder.mkdir(mode=0o700, parents=True)
        files = RunFiles(folder)
        for path in (files.output, files.state):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
        prepare(files.output)
    except OSError as exc:
        logger.info("no run folder made ahead in %s: %s", spool_dir, exc)
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return folder


def _remove_ahead(folder: Path) -> None:
    """Remove a folder `_make_ahead` made that no run took: its three empty files and
    itself, a few unlinks on the loop (`shutil.rmtree`, for a run's folder, is a worker
    thread's job when a tab closes)."""
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        os.rmdir(folder)
    except OSError:
        return  # gone already (a sweep), or not ours to judge: the next sweep sees it


def sweep_folders(spool_dir: Path) -> None:
    """Remove the folders made ahead by habitat processes that are gone (a live one's
    stay: its next runs take them)."""
    try:
        names = os.listdir(spool_dir)
    except OSError:
        return
    for name in names:
        if not name.startswith(_AHEAD):
            continue
        pid = name[len(_AHEAD) :].partition("-")[0]
        if pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(spool_dir / name, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process: not ours to judge
    return True


def _folder(cwd: str) -> tuple[int, int] | None:
    try:
        st = os.stat(cwd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class Prestarts:
    """The prestarted wrappers of one shell's tabs (`_KEPT` at most per tab, oldest first)."""

    def __init__(
        self, spawner: Spawner, task_group: TaskGroup, spool_dir: Path, enabled: bool = True
    ) -> None:
        self._spawner = spawner
        self._tg = task_group
        self._spool_dir = spool_dir
        # The wrapper reads its run folder as one line.
        self._enabled = enabled and "\n" not in str(spool_dir)
        self._ready: dict[str, list[Ready]] = {}
        self._pending: dict[str, tuple[_Key, dict[str, str], anyio.Event]] = {}
        self._generation: dict[str, int] = {}
        """Per tab, the latest `prepare`: an earlier one stops."""
        self._closed = False

    def pid(self, tab: str) -> int | None:
        """The pid of the tab's prestarted wrapper its next run takes, when one waits."""
        ready = self._ready.get(tab)
        return ready[0].started.process.pid if ready else None

    def idle(self, tab: str) -> bool:
        """Whether a wrapper may be started for the tab now: prestarts are on, and none is
        being started for it already (a `prepare` under way tops it up)."""
        return self._enabled and tab not in self._pending

    async def take(
        self, tab: str, shell: ShellInfo, cwd: str, env: Mapping[str, str]
    ) -> Ready | None:
        """The tab's prestarted wrapper if it fits this run (then it is the caller's to
        `go` or `close`); None otherwise (a misfit is closed)."""
        folder = _folder(cwd)
        if folder is None:
            self.discard(tab)
            return None
        key = _Key(shell.executable, cwd, folder)
        pending = self._pending.get(tab)
        if pending is not None and pending[0] == key and not self._ready.get(tab):
            with anyio.move_on_after(_PENDING_BOUND):
                await pending[2].wait()
        kept = self._ready.get(tab)
        if not kept:
            return None
        if kept[0].key != key or kept[0].env != env:
            self.discard(tab)  # they were all started for the tab as it stood then
            return None
        ready = kept.pop(0)
        if not ready.started.process.alive():
            self._close(ready)
            return None
        return ready

    @property
    def enabled(self) -> bool:
        return self._enabled

    def sweep(self) -> None:
        """Remove the run folders made ahead by habitat processes that are gone (`_AHEAD`)."""
        if self._enabled:
            sweep_folders(self._spool_dir)

    async def prepare(self, tab: str, shell: ShellInfo, cwd: str, env: dict[str, str]) -> None:
        """Prestart wrappers for the tab's next runs in `cwd` with `env` until `_KEPT` that
        fit wait there (a background task calls it: each takes a fork, an exec and a cgroup
        move, in a worker thread). The latest call for a tab wins: an earlier one still
        starting stops, and what it started is closed."""
        argv = prestart_argv(shell, env)
        folder = _folder(cwd)
        if not self._enabled or argv is None or folder is None:
            return
        key = _Key(shell.executable, cwd, folder)
        pending = self._pending.get(tab)
        if pending is not None and pending[:2] == (key, env):
            return  # the call that started it tops the tab up
        generation = self._generation[tab] = self._generation.get(tab, 0) + 1
        kept = self._ready.get(tab)
        if kept and (kept[0].key != key or kept[0].env != env):
            self._close_kept(tab)
        while (
            not self._closed
            and self._generation[tab] == generation
            and len(self._ready.get(tab, [])) < _KEPT
        ):
            done = anyio.Event()
            self._pending[tab] = (key, env, done)
            if not await self._prestart(tab, key, argv, env, done, generation):
                return

    async def _prestart(
        self,
        tab: str,
        key: _Key,
        argv: list[str],
        env: dict[str, str],
        done: anyio.Event,
        generation: int,
    ) -> bool:
        """Start one more wrapper for `tab`; whether it now waits there."""
        marker = f"run-p{secrets.token_hex(8)}"
        made: list[Path | None] = [None]

        def ahead() -> None:
            made[0] = _make_ahead(self._spool_dir, marker)

        try:
            # Its folder is made in the worker thread that started it, after it: a folder
            # and three files made on the loop kept it from the next request for 1-2 ms a
            # run on a busy disk (py-spy at load 13), each create waiting for the journal.
            started = await self._spawner.prestart(
                argv, cwd=Path(key.cwd), env=env, marker=marker, then=ahead
            )
        except (OSError, ValueError) as exc:  # the next run starts cold, and says why if it
            # cannot either (ValueError: a NUL in the environment, which exec cannot take)
            logger.info("no prestarted wrapper for tab %s: %s", tab, exc)
            started = None
        finally:
            if (pending := self._pending.get(tab)) is not None and pending[2] is done:
                del self._pending[tab]
            done.set()
        if started is None:
            return False
        ready = Ready(started, key, env, marker, made[0])
        kept = self._ready.setdefault(tab, [])
        if self._closed or self._generation.get(tab) != generation or len(kept) >= _KEPT:
            self._close(ready)  # closed meanwhile, or the tab moved on
            return False
        kept.append(ready)
        return True

    def release(self, ready: Ready) -> None:
        """After `take`: close the wrapper unless a run took it (its `go` is closed then)."""
        if ready.started.go >= 0:
            self._close(ready)

    def discard(self, tab: str) -> None:
        """Close the tab's prestarted wrappers, if it has any (its tab closed, or moved), and
        those still being started for it once they are."""
        self._generation[tab] = self._generation.get(tab, 0) + 1
        self._close_kept(tab)

    def _close_kept(self, tab: str) -> None:
        for ready in self._ready.pop(tab, []):
            self._close(ready)

    def close(self) -> None:
        """Close every prestarted wrapper (they exit at EOF on their stdin), and those still
        being started once they are."""
        self._closed = True
        for tab in list(self._ready):
            self.discard(tab)

    def _close(self, ready: Ready) -> None:
        with contextlib.suppress(OSError):
            os.close(ready.started.go)
        ready.started.go = -1
        self._tg.start_soon(self._gone, ready)

    async def _gone(self, ready: Ready) -> None:
        # Reaped, and its empty group removed, once it has read its EOF; its folder made
        # ahead goes (it never learnt its name).
        folder, ready.folder = ready.folder, None
        if folder is not None:
            _remove_ahead(folder)
        with anyio.CancelScope(shield=True), anyio.move_on_after(_PENDING_BOUND):
            await ready.started.process.wait()
            record = ready.started.process.record
            if self._spawner.ended_alone(record):
                await anyio.to_thread.run_sync(self._spawner.release_group, record)
