"""Prestarts: each tab's next wrappers (two), started in the lull after its last run's answer
(`lull`; as a run begins when none waits), so that the next run starts with one write
instead of a fork, an exec and a cgroup move.

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

# How long a run waits for its tab's prestart still under way (mostly done: it began after
# the last answer, or as the last run began) before it starts cold instead.
_PENDING_BOUND = 1.0
# Ready wrappers kept per tab: a call right behind the last answer takes the second while
# the next one is still being started (a cgroup move waits milliseconds on a busy machine).
_KEPT = 2


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
    """The prestarted wrappers of one shell's tabs (`_KEPT` at most per tab, oldest first)."""

    def __init__(
        self, spawner: Spawner, task_group: TaskGroup, spool_dir: Path, enabled: bool = True
    ) -> None:
        self._spawner = spawner
        self._tg = task_group
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
        try:
            started = await self._spawner.prestart(argv, cwd=Path(key.cwd), env=env, marker=marker)
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
        ready = Ready(started, key, env, marker)
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
        # Reaped, and its empty group removed, once it has read its EOF.
        with anyio.CancelScope(shield=True), anyio.move_on_after(_PENDING_BOUND):
            await ready.started.process.wait()
            record = ready.started.process.record
            if self._spawner.ended_alone(record):
                await anyio.to_thread.run_sync(self._spawner.release_group, record)
