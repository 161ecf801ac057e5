"""Which rungs' work is waiting on a warm checker's start, whose first answer is a check of
the whole program (a Node project's warm tsc: ms 3.0.0's took 121 s at load 30-50, more than
its whole jest suite). The climb reads it (verify/ahead.py): while the rung it is at waits so,
a red of the tests started beside the first rungs may end the climb there."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import anyio

from ..models import RungName

__all__ = ["LongWaits"]


@dataclass
class LongWaits:
    """The rungs waiting on a start now; a climb waits until one of them is."""

    now: set[RungName] = field(default_factory=set)
    _entered: dict[RungName, anyio.Event] = field(default_factory=dict)

    @contextmanager
    def waiting(self, rung: RungName) -> Iterator[None]:
        """`rung`'s work waits on a start for as long as this block runs."""
        self.now.add(rung)
        if (entered := self._entered.pop(rung, None)) is not None:
            entered.set()
        try:
            yield
        finally:
            self.now.discard(rung)

    async def until(self, rung: RungName) -> None:
        """Returns once `rung`'s work waits on a start (at once when it does)."""
        while rung not in self.now:
            await self._entered.setdefault(rung, anyio.Event()).wait()
