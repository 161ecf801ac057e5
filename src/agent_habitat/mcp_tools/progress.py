"""Progress notifications for one tool call: only with a token, monotonic, rate-limited.

The SDK sends whatever it is asked to; the MCP spec asks for more (a progress value
that always increases, a rate limit, nothing after the result), so every report a
tool makes goes through `ProgressThrottle`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio

__all__ = ["MIN_INTERVAL_SECONDS", "ProgressThrottle", "Report"]

MIN_INTERVAL_SECONDS = 0.25
"""At most four notifications per second per request."""

Report = Callable[[float, float | None, str | None], Awaitable[None]]
"""`(progress, total, message)` — e.g. `ctx.session.report_progress`."""

_MESSAGE_LIMIT = 200


class ProgressThrottle:
    """Forwards `(elapsed, last_line)` reports to the client, dropping what the spec forbids.

    Use it as the `Progress` callable handed to the shell service, and `close()` it before
    the tool returns its result: a report that is being sent finishes first, later ones
    are dropped, so no notification ever follows the result.
    """

    def __init__(
        self,
        report: Report,
        *,
        enabled: bool,
        min_interval: float = MIN_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._report = report
        self._enabled = enabled
        self._min_interval = min_interval
        self._clock = clock
        self._last_value: float | None = None
        self._last_sent_at: float | None = None
        self._closed = False
        # Held while a notification is being written, so close() can wait for it.
        self._lock = anyio.Lock()
        self.sent = 0

    @property
    def enabled(self) -> bool:
        """False when the request carried no progress token: then nothing is ever sent."""
        return self._enabled

    async def __call__(self, elapsed: float, line: str) -> None:
        if not self._enabled or self._closed:
            return
        value = round(elapsed, 3)
        if self._last_value is not None and value <= self._last_value:
            return
        now = self._clock()
        if self._last_sent_at is not None and now - self._last_sent_at < self._min_interval:
            return
        async with self._lock:
            if self._closed:
                return
            self._last_value = value
            self._last_sent_at = now
            self.sent += 1
            await self._report(value, None, _one_line(line))

    async def close(self) -> None:
        """Stop for good; returns once a notification being sent has been written."""
        self._closed = True
        async with self._lock:
            pass


def _one_line(line: str) -> str:
    text = " ".join(line.split())
    if not text:
        return "no output yet"
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 1] + "…"
