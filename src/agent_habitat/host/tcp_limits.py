"""What the host's TCP listener allows a client that has sent no token yet.

Any local user can open TCP connections to the host, token or not. Left alone, about 1,100
half-sent requests used up the process's file descriptors, and then nothing could reach
the host, its unix socket included (issue 23). So on TCP, and on TCP only:

* a connection cap: at `max_connections`, a new connection evicts the oldest one still
  waiting for its request head (a client that means it sends its head at once), and is
  refused only when every connection is serving a request;
* a request-head timeout: a request whose head (request line and headers) has not fully
  arrived `head_timeout` seconds after its first byte, or after the connection opened, is
  closed (uvicorn's keep-alive timeout only covers the time between requests);
* a bound on the head's size (h11's incomplete-event limit): a client cannot make the
  host buffer an endless header.

The unix socket is served by a server of its own (`host/server.py`), with its own
connections, so a saturated TCP listener never shuts its owner out. `raise_fd_limit` lifts
the process's soft descriptor limit to its hard one, so the cap, not the kernel, decides.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "HEAD_TIMEOUT_SECONDS",
    "MAX_HEAD_BYTES",
    "MAX_TCP_CONNECTIONS",
    "TcpLimitedProtocol",
    "raise_fd_limit",
    "tcp_connection_cap",
]

logger = logging.getLogger(__name__)

HEAD_TIMEOUT_SECONDS = 10.0
"""A request head must be complete this long after it began (a browser sends it at once)."""
MAX_TCP_CONNECTIONS = 512
"""Above the 200 dashboard/SSE clients the host is known to serve; far below the fd limit."""
MAX_HEAD_BYTES = 64 * 1024
"""Request line and headers together (a dashboard's cookies fit many times over)."""
# Descriptors kept for everything but TCP clients: the unix socket's clients, spools,
# SQLite, the runs' pipes.
_RESERVED_FDS = 256


def raise_fd_limit() -> int:
    """Lift the soft RLIMIT_NOFILE to the hard limit (capped at 65,536); the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            logger.warning("could not raise the open-file limit above %s", soft)
    return soft


def tcp_connection_cap(fd_limit: int) -> int:
    """The TCP cap for a process that may open `fd_limit` descriptors."""
    return max(16, min(MAX_TCP_CONNECTIONS, fd_limit - _RESERVED_FDS))


class TcpLimitedProtocol(H11Protocol):
    """uvicorn's h11 protocol with a connection cap and a request-head timeout.

    `max_connections` and `head_timeout` are class attributes: uvicorn builds one protocol
    per connection from the class it is given, so `configured` makes a subclass per server.
    """

    max_connections = MAX_TCP_CONNECTIONS
    head_timeout = HEAD_TIMEOUT_SECONDS

    @classmethod
    def configured(cls, max_connections: int, head_timeout: float) -> type[TcpLimitedProtocol]:
        return type(
            "TcpLimitedProtocol",
            (cls,),
            {"max_connections": max_connections, "head_timeout": head_timeout},
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._waiting_since: float | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.max_connections and not self._evict_one():
            # Refused before uvicorn counts it: the cap holds however many try.
            self.transport = transport
            transport.abort()
            return
        super().connection_made(transport)
        self._arm_head_timer()

    def _evict_one(self) -> bool:
        waiting = [
            c
            for c in self.connections
            if isinstance(c, TcpLimitedProtocol) and c._waiting_since is not None
        ]
        if not waiting:
            return False
        oldest = min(waiting, key=lambda c: c._waiting_since or 0.0)
        oldest._disarm_head_timer()
        oldest.transport.abort()
        # Forgotten now, not when the loop calls its connection_lost: the cap counts at once.
        self.connections.discard(oldest)
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        if self.flow is not None:  # None: refused in connection_made, uvicorn never saw it
            super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        waiting_for_head = self.cycle is None or self.cycle.response_complete
        before = self.cycle
        super().data_received(data)
        if self.cycle is not before:
            self._disarm_head_timer()  # a whole head arrived: the request runs
        # Between requests uvicorn's keep-alive timeout runs; the head timer starts again
        # with the next request's first byte.
        elif waiting_for_head and self._head_timer is None and not self.transport.is_closing():
            self._arm_head_timer()  # the first bytes of the next request on a kept connection

    def handle_websocket_upgrade(self, event: Any) -> None:
        self._disarm_head_timer()  # the connection is the WebSocket protocol's from here
        super().handle_websocket_upgrade(event)

    def _arm_head_timer(self) -> None:
        self._disarm_head_timer()
        self._head_timer = self.loop.call_later(self.head_timeout, self._head_timed_out)
        self._waiting_since = self.loop.time()

    def _disarm_head_timer(self) -> None:
        self._waiting_since = None
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.cycle is None or self.cycle.response_complete:
            self.transport.close()
