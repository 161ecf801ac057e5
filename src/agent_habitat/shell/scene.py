"""The scene: every tab at a glance, built to stay quick with many callers and loud tabs.

The database is read on the event loop (one connection, a few queries for all tabs), and so
are the previews' spool reads while they are small (`output.INLINE_READ_BYTES`). Callers that
arrive while a scene is being built share the next build (`SharedBuild`): twenty concurrent
clients cost about one build each round, not twenty, and every result was built after its
call began.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Generic, TypeVar

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from ..errors import HabitatError
from ..proc.spool import Spool
from ..secrets import secret_values
from . import leftovers
from .models import Caps, LastRunSummary, LeftProcess, SceneResult, TabScene
from .output import INLINE_READ_BYTES, read_capped
from .run_store import RunRow
from .shells import resolve_shell
from .tabs import Tabs

__all__ = ["SceneBuilder", "SharedBuild"]

T = TypeVar("T")


class SceneBuilder:
    """Builds the scene of one shell's tabs; keeps each tab's preview while its spool is
    unchanged (same size and mtime: a write or a punched hole changes both or the mtime)."""

    def __init__(self, tabs: Tabs) -> None:
        self.tabs = tabs
        self._previews: dict[Path, tuple[tuple[int, int, int], str]] = {}

    async def build(self) -> SceneResult:
        shell = self.tabs
        now = shell.clock.time()
        tabs = shell.store.tabs()
        running: dict[str, RunRow] = {}
        for row in shell.store.running():
            # Watched from now on (its end comes from the process), so the next scene finds
            # it among the live runs instead of looking in the process table again.
            row = shell.runs.reconcile(row, watch=True)
            if row.state == "running":
                running[row.tab] = row
        latest = shell.store.latest()
        shown = {tab.name: running.get(tab.name) or latest.get(tab.name) for tab in tabs}
        previews = await self._read_previews(
            [run.files.output for run in shown.values() if run is not None]
        )
        scenes: list[TabScene] = []
        for tab in tabs:
            run = shown[tab.name]
            live = running.get(tab.name)
            scenes.append(
                TabScene(
                    name=tab.name,
                    shell=_shell_kind(tab.shell),
                    cwd=tab.cwd,
                    state="running" if live else "idle",
                    pid=live.pid if live else None,
                    last_run=None
                    if run is None
                    else LastRunSummary(
                        index=run.idx,
                        command=run.command,
                        state=run.state,
                        exit_code=run.exit_code,
                        duration_s=run.duration_s(now),
                    ),
                    preview="" if run is None else previews.get(run.files.output, ""),
                    left_running=self._left_running(tab.name, latest.get(tab.name)),
                )
            )
        c = shell.config
        caps = Caps(
            max_tabs=c.max_tabs,
            history_rows=c.history_rows,
            output_cap_bytes=c.output_cap_bytes,
            preview_bytes=c.preview_bytes,
        )
        return SceneResult(tabs=scenes, caps=caps)

    def _left_running(self, tab: str, newest: RunRow | None) -> list[LeftProcess]:
        # The newest ended run's small file carries every earlier run's survivors; only a
        # tab whose newest run still runs needs the store to find the one before it.
        if newest is None:
            return []
        if newest.state == "running":
            found = self.tabs.runs.leftovers(tab, newest)
            return [item.model() for item in found[1]] if found else []
        left = leftovers.read(newest.run_dir)
        return [item.model() for item in leftovers.alive(self.tabs.spawner, left)]

    async def _read_previews(self, outputs: list[Path]) -> dict[Path, str]:
        found: dict[Path, str] = {}
        stale: list[tuple[Path, tuple[int, int, int]]] = []
        for output in outputs:
            key = _version(output)
            cached = self._previews.get(output)
            if cached is not None and cached[0] == key:
                found[output] = cached[1]
            else:
                stale.append((output, key))
        if stale:
            cap = self.tabs.config.preview_bytes
            read_now = functools.partial(_read, [output for output, _ in stale], cap)
            # A few KiB a tab are read where the scene is built (a worker's hand-off would
            # cost more under load than the read); many big previews in a worker thread.
            if len(stale) * cap <= INLINE_READ_BYTES:
                read = read_now()
            else:
                read = await anyio.to_thread.run_sync(read_now)
            for output, key in stale:
                found[output] = read[output]
                self._previews[output] = (key, read[output])
        for gone in set(self._previews) - set(outputs):
            del self._previews[gone]
        return found


def _version(output: Path) -> tuple[int, int, int]:
    try:
        st = os.stat(output)
    except OSError:
        return (-1, 0, 0)
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _read(outputs: list[Path], cap: int) -> dict[Path, str]:
    secrets = secret_values()
    previews = {}
    for output in outputs:
        since = max(0, Spool(output).size() - cap)
        previews[output] = read_capped(output, cap, since=since, secrets=secrets).text
    return previews


@functools.lru_cache(maxsize=64)
def _shell_kind(shell: str) -> str:
    return resolve_shell(shell).kind if shell else "unknown"


class _Build(Generic[T]):
    def __init__(self) -> None:
        self.started = False
        self.done = anyio.Event()
        self.result: list[T] = []
        self.error: BaseException | None = None


class SharedBuild(Generic[T]):
    """Runs `build` for callers, one at a time; callers arriving while one runs wait for
    the next, which they share. Builds run in `task_group`, so a caller that gives up
    cancels nobody else's."""

    def __init__(self, task_group: TaskGroup, build: Callable[[], Awaitable[T]]) -> None:
        self._tg = task_group
        self._build = build
        self._running: _Build[T] | None = None
        self._next: _Build[T] | None = None

    async def get(self) -> T:
        if self._next is not None:
            build = self._next
        elif self._running is not None and not self._running.started:
            build = self._running  # due to start after this call began: shared
        elif self._running is not None:
            build = self._next = _Build()
        else:
            build = self._running = _Build()
            self._tg.start_soon(self._run, build)
        await build.done.wait()
        if build.error is not None:
            raise build.error
        return build.result[0]

    async def _run(self, build: _Build[T]) -> None:
        build.started = True
        try:
            build.result.append(await self._build())
        except Exception as exc:  # every caller of this build gets it, as its own call would
            build.error = exc
        finally:
            if not build.result and build.error is None:
                build.error = HabitatError("the shell habitat is closing")
            build.done.set()
            self._running = None
            if self._next is not None:
                self._running, self._next = self._next, None
                self._tg.start_soon(self._run, self._running)
