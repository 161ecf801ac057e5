"""The warm-up's own work stopped while a verify runs (issue 22).

Once no verify runs, a Python project's warm steps begin side by side (warmup.py); a verify
asked while they run must not share the cores with them. tabulate 0.9 through a host
opened just before: the second edit's verdict took 34.1 s against 19.1 s when the warm-up
came after it (its tests 31.6 s against 16.5 s), dmypy's start (a whole check) running
beside them.

dmypy's start is what no rung waits for and what costs: while it runs, `compile.project`
checks with plain mypy. So from any verify request (the bus's `environment.task.queued`,
delivered synchronously from the request) until no verify is queued or running
(`verify.epoch.finished` of the last one), its process groups are stopped (SIGSTOP) and then
continued (SIGCONT): the client's, and the daemon's, which it forks into a session of its
own (found by the pid in its status file). A stop is absolute where priority is not: a
lowered nice weighs nothing against another session's tasks under Linux autogroups, and
without autogroups (a container whose cgroup has the cpu controller, as CI may be) a
daemon's nice, once lowered, cannot be raised back without a privilege, and the daemon
answers every later recheck. Between verifies the start runs at its own priority, so it
still ends, in the gaps a user leaves.

A Cargo project's warm-up cannot be stopped so: its cargo holds the lock on a target folder
the verify's own cargo runs then wait for (the tree's clippy in the check folder, HEAD's
checks and builds in HEAD's), so a stopped one would hold them forever. Its runs are
cancelled instead (`cancelled_by_verify`: their processes killed, what they finished kept in
the target folder) and asked again once no verify runs (`quiet`).

A group is continued when the step lets go of it (`hold` ends: the daemon then answers the
verifies' rechecks) and when listening ends (the host closes: a stopped process would not
act on the SIGTERM that stops it). Only a group this stopped is continued: a group id may be
reused once its processes are gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator

import anyio

from ...events import Event, EventBus

__all__ = ["GiveWay"]

_FOLLOW_S = 0.05
"""How often a daemon's status file is looked at until it names the daemon."""


class GiveWay:
    """The process groups of warm-up work, stopped while a verify is queued or running."""

    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self._busy: set[str] = set()
        self._groups: dict[int, bool] = {}
        """Group id → stopped by this."""
        self.stops = 0
        """Times verify stopped the work (one stop however many groups it held)."""
        self._holding_back = False
        self._scopes: set[anyio.CancelScope] = set()
        self._quiet: anyio.Event | None = None
        """Set once no verify is queued or running (made by the first to wait for it)."""

    @property
    def busy(self) -> bool:
        return bool(self._busy)

    @contextlib.contextmanager
    def listening(self) -> Iterator[None]:
        """Hear verify requests (and their ends) for as long as the block runs; the slot
        listens from before the warm-up, so a request it missed cannot leave it thinking
        verify is quiet while one runs."""
        unsubscribe = self.bus.subscribe(self._on_event)
        try:
            yield
        finally:
            unsubscribe()
            self._busy.clear()
            self._let_waiters_go()
            self._holding_back = False
            for group in list(self._groups):
                self._continue(group)

    async def quiet(self) -> None:
        """Returns once no verify is queued or running."""
        while self._busy:
            if self._quiet is None:
                self._quiet = anyio.Event()
            await self._quiet.wait()

    @contextlib.contextmanager
    def cancelled_by_verify(self) -> Iterator[anyio.CancelScope]:
        """A block cancelled as soon as a verify is queued (at once if one is): its scope,
        which says whether it was (`cancelled_caught`)."""
        scope = anyio.CancelScope()
        if self._busy:
            scope.cancel()
        self._scopes.add(scope)
        try:
            with scope:
                yield scope
        finally:
            self._scopes.discard(scope)

    @contextlib.contextmanager
    def holding(self) -> Iterator[GiveWay]:
        """For one step: every group `add`ed meanwhile is let go (continued if stopped) at
        the end."""
        before = set(self._groups)
        try:
            yield self
        finally:
            for group in set(self._groups) - before:
                self._continue(group)
                del self._groups[group]

    def add(self, group: int) -> None:
        """Stop `group` whenever a verify runs (at once if one does) until its step ends."""
        if group in self._groups or group == os.getpgrp():  # never the habitat's own
            return
        self._groups[group] = False
        if self._busy:
            self._stop(group)

    def add_process(self, pid: int) -> None:
        """`add` the group of process `pid` (gone: nothing to stop)."""
        try:
            self.add(os.getpgid(pid))
        except ProcessLookupError:
            pass

    async def follow(self, pid_of: Callable[[], int | None]) -> None:
        """`add_process` the process `pid_of` names once it names one (a daemon's status
        file); runs until cancelled or done."""
        while True:
            pid = pid_of()
            if pid is not None:
                self.add_process(pid)
                return
            await anyio.sleep(_FOLLOW_S)  # a file another process writes: no event to wait on

    def _on_event(self, event: Event) -> None:
        if event.kind == "environment.task.queued" and event.task:
            self._busy.add(event.task.split(".", 1)[0])
            for scope in self._scopes:
                scope.cancel()
            for group in list(self._groups):
                self._stop(group)
        elif event.kind == "verify.epoch.finished" and event.task:
            self._busy.discard(event.task.split(".", 1)[0])
            if not self._busy:
                self._let_waiters_go()
                self._holding_back = False
                for group in list(self._groups):
                    self._continue(group)

    def _let_waiters_go(self) -> None:
        if self._quiet is not None:
            self._quiet.set()
            self._quiet = None

    def _stop(self, group: int) -> None:
        if self._groups.get(group):
            return
        try:
            os.killpg(group, signal.SIGSTOP)
        except (ProcessLookupError, PermissionError):
            return  # its processes have ended
        self._groups[group] = True
        if not self._holding_back:
            self._holding_back = True
            self.stops += 1

    def _continue(self, group: int) -> None:
        if self._groups.get(group):
            self._groups[group] = False
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGCONT)
