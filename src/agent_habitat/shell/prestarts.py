"""Prestarts: each tab's next wrapper, started as its last run ended, so that the next run
starts with one write instead of a fork, an exec and a cgroup move.

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
import logging
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from ..proc.spawner import Spawner
from ..proc.supervised import Prestarted
from .shells import ShellInfo
from .wrapper import prestart_argv

__all__ = ["Prestarts", "Ready"]

logger = logging.getLogger(__name__)

# How long a run waits for its tab's prestart still under way (it began as the last run
# ended, so it is mostly done) before it starts cold instead.
_PENDING_BOUND = 1.0


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


def _folder(cwd: str) -> tuple[int, int] | None:
    try:
        st = os.stat(cwd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class Prestarts:
    """The prestarted wrappers of one shell's tabs (one at most per tab)."""

    def __init__(
        self, spawner: Spawner, task_group: TaskGroup, spool_dir: Path, enabled: bool = True
    ) -> None:
        self._spawner = spawner
        self._tg = task_group
        # The wrapper reads its run folder as one line.
        self._enabled = enabled and "\n" not in str(spool_dir)
        self._ready: dict[str, Ready] = {}
        self._pending: dict[str, tuple[_Key, dict[str, str], anyio.Event]] = {}
        self._closed = False

    def pid(self, tab: str) -> int | None:
        """The pid of the tab's prestarted wrapper, when one waits."""
        ready = self._ready.get(tab)
        return ready.started.process.pid if ready is not None else None

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
        if pending is not None and pending[0] == key:
            with anyio.move_on_after(_PENDING_BOUND):
                await pending[2].wait()
        ready = self._ready.pop(tab, None)
        if ready is None:
            return None
        if ready.key != key or ready.env != env or not ready.started.process.alive():
            self._close(ready)
            return None
        return ready

    @property
    def enabled(self) -> bool:
        return self._enabled

    async def prepare(self, tab: str, shell: ShellInfo, cwd: str, env: dict[str, str]) -> None:
        """Prestart the tab's next wrapper for a run in `cwd` with `env`, unless the one it
        has (or is starting) fits already (a background task calls it: it takes a fork, an
        exec and a cgroup move, in a worker thread)."""
        argv = prestart_argv(shell, env)
        folder = _folder(cwd)
        if not self._enabled or argv is None or folder is None:
            return
        key = _Key(shell.executable, cwd, folder)
        pending = self._pending.get(tab)
        if pending is not None:
            if pending[:2] == (key, env):
                return
            # Started for the tab as it stood before its last run moved it: once it is
            # there, it is replaced below.
            with anyio.move_on_after(_PENDING_BOUND):
                await pending[2].wait()
            if tab in self._pending:
                return  # still starting, or another prepare took over
        ready = self._ready.get(tab)
        if ready is not None and ready.key == key and ready.env == env:
            if ready.started.process.alive():
                return
        self.discard(tab)
        done = anyio.Event()
        self._pending[tab] = (key, env, done)
        await self._prestart(tab, key, argv, env, done)

    async def _prestart(
        self, tab: str, key: _Key, argv: list[str], env: dict[str, str], done: anyio.Event
    ) -> None:
        marker = f"run-p{secrets.token_hex(8)}"
        try:
            started = await self._spawner.prestart(argv, cwd=Path(key.cwd), env=env, marker=marker)
        except (OSError, ValueError) as exc:  # the next run starts cold, and says why if it
            # cannot either (ValueError: a NUL in the environment, which exec cannot take)
            logger.info("no prestarted wrapper for tab %s: %s", tab, exc)
            started = None
        finally:
            self._pending.pop(tab, None)
            done.set()
        if started is not None:
            ready = Ready(started, key, env, marker)
            if self._closed or tab in self._ready:  # closed meanwhile, or a second prepare
                self._close(ready)
            else:
                self._ready[tab] = ready

    def release(self, ready: Ready) -> None:
        """After `take`: close the wrapper unless a run took it (its `go` is closed then)."""
        if ready.started.go >= 0:
            self._close(ready)

    def discard(self, tab: str) -> None:
        """Close the tab's prestarted wrapper, if it has one (its tab closed, or moved)."""
        ready = self._ready.pop(tab, None)
        if ready is not None:
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
        # Reaped, and its empty group removed, once it has read its EOF.
        with anyio.CancelScope(shield=True), anyio.move_on_after(_PENDING_BOUND):
            await ready.started.process.wait()
            record = ready.started.process.record
            if self._spawner.ended_alone(record):
                await anyio.to_thread.run_sync(self._spawner.release_group, record)
