"""The processes of the rungs a climb stops when it ends at a red, reaped after its verdict.

A climb that ends red at one rung stops the rungs still running beside it
(`ahead.RedBeside`, a dropped `Ahead`): their processes are killed. That kill waits — a scan
of the run's members, SIGTERM, a poll until they are gone, a scan again — and the verdict
waited with it: 0.1-0.2 s of every Go compile error at load 25-40, whose go test is red
while go vet still runs (uuid v1.6.0, issue 27). Here, once the climb is ending
(`Stopping.ending`), a rung process that is cancelled gets SIGTERM on its process group at
once (its CPU is free from then on), and the rest of its kill (`kill_tree`: the members
outside the group, SIGKILL after the grace, the check that none remain) and its reaping are
handed to `Stopping.later`: work the verdict does not wait for, which the climb's caller
does after it published the verdict (the host's runner before it takes the next climb, the
one-shot CLI before it exits); without such a caller `run_ladder` does it before it
returns. A cancel that is not the climb's own ending (the person's cancel, a superseding
request, a timeout) kills as before, before the cancel returns.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

import anyio

__all__ = ["Stopping", "current", "ending_red", "stopping"]

Later = Callable[[], Awaitable[None]]


@dataclass
class Stopping:
    ending: bool = False
    """The climb is ending at a red: the rungs cancelled from now on are the ones it stops."""
    later: list[Later] = field(default_factory=list)
    """Each stopped process's remaining kill and reaping, in the order they were stopped."""

    def end(self) -> None:
        self.ending = True

    async def reap(self) -> None:
        """Finish what was handed over (shielded: the processes must not outlive it)."""
        with anyio.CancelScope(shield=True):
            while self.later:
                await self.later.pop(0)()


_CURRENT: ContextVar[Stopping | None] = ContextVar("habitat_climb_stopping", default=None)


def current() -> Stopping | None:
    """The climb's `Stopping` this task runs under (None outside a climb)."""
    return _CURRENT.get()


def ending_red() -> None:
    """Said by a rung that has decided to be red before it stops its own work: a red ends
    the climb, so what it cancels from now on is reaped after the verdict, as what the
    climb stops is (nothing outside a climb). Without it, a rung's own cancel waited for
    the whole kill: a Rust compile error's verdict waited 0.8 s for clippy's (scopeguard
    1.2.0 at load 40)."""
    if (climb := current()) is not None:
        climb.end()


@contextlib.contextmanager
def stopping(value: Stopping) -> Iterator[Stopping]:
    """Run the climb's tasks under `value` (tasks started inside inherit it)."""
    token = _CURRENT.set(value)
    try:
        yield value
    finally:
        _CURRENT.reset(token)
