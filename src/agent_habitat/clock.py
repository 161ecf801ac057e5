"""The clock seam: what time it is, and sleeping until later.

Services that stamp times or wait for deadlines take a `Clock`; `SystemClock` is the real
one. `agent_habitat.testing.FakeClock` stands still until a test advances it, so timeouts
and progress intervals are tested without waiting for them.
"""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock"]


class Clock(Protocol):
    def time(self) -> float:
        """Seconds since the epoch: timestamps that are stored or shown."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back: elapsed times."""

    async def sleep(self, seconds: float) -> None:
        """Return after `seconds` on this clock (a cancellation point)."""


class SystemClock:
    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        import anyio  # here: what only stamps times (`shell.run_store`) has no event loop

        await anyio.sleep(seconds)


SYSTEM_CLOCK = SystemClock()
