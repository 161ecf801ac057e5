"""Who the host lets in over TCP: the workspace's bearer token and the browser sessions.

The bearer token (the `token` file, 0600) is for the programs of the user (the CLI, MCP
clients). A browser never holds it: a login (a one-time code from `habitat dashboard`, or
`?token=` on the page) opens a *session* — a random secret in an HttpOnly, SameSite=Strict
cookie whose name carries the host's port, so another loopback port's server never gets a
cookie that works here by name, and two dashboards in one browser keep their own cookies —
and a CSRF token the page sends back as a header (`X-Habitat-CSRF`) on every call that acts.

Why both: a browser counts every port of `127.0.0.1` as one *site*, so SameSite=Strict
sends the cookie along with a request that any page on another loopback port makes. The
Guard refuses such a request by its Origin; the header is the second lock for a request
that carries no Origin, and a page elsewhere can neither read the token nor set the header
without a CORS preflight, which the host never answers.

Sessions live in the host's memory: a restarted host forgets them (`habitat dashboard`
logs in again), and `rotate()` ends them all together with the old token.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = [
    "COOKIE_PREFIX",
    "CSRF_HEADER",
    "MAX_SESSIONS",
    "BrowserSession",
    "Credentials",
    "cookie_name",
]

COOKIE_PREFIX = "habitat_session_"
CSRF_HEADER = "x-habitat-csrf"
MAX_SESSIONS = 64
"""Open browser sessions a host keeps; the oldest goes first (nobody needs 64 logins)."""


def cookie_name(port: int | None) -> str:
    """The session cookie's name on the host listening on `port`."""
    return f"{COOKIE_PREFIX}{port if port is not None else 'unix'}"


@dataclass(frozen=True)
class BrowserSession:
    secret: str
    """The cookie's value: what the browser presents instead of the token."""
    csrf: str
    """What the page sends as `X-Habitat-CSRF` with every call that acts."""
    opened_at: float


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


class Credentials:
    """The token the host accepts now and the browser sessions opened under it.

    `rotate_file` writes a fresh token where the CLI reads it (`HostFiles.rotate_token`) and
    returns it; without one (tests) the new token lives in memory only."""

    def __init__(
        self,
        token: str | None,
        *,
        rotate_file: Callable[[], str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._token = token
        self._rotate_file = rotate_file
        self._clock = clock
        self._sessions: dict[str, BrowserSession] = {}

    @property
    def token(self) -> str | None:
        return self._token

    def bearer_ok(self, offered: Iterable[str]) -> bool:
        """True when one of `offered` is the token; every candidate is compared (no early
        exit), so timing says nothing about which one or how much of it matched."""
        if self._token is None:
            return False  # TCP without a token is never served (the host refuses to bind so)
        results = [_same(o, self._token) for o in offered]
        return any(results)

    def open_session(self) -> BrowserSession:
        while len(self._sessions) >= MAX_SESSIONS:
            self._sessions.pop(next(iter(self._sessions)))
        session = BrowserSession(
            secret=secrets.token_urlsafe(32),
            csrf=secrets.token_urlsafe(24),
            opened_at=self._clock(),
        )
        self._sessions[session.secret] = session
        return session

    def session(self, secret: str) -> BrowserSession | None:
        """The open session whose cookie value is `secret`, or None."""
        found = None
        for known, session in self._sessions.items():
            if _same(secret, known):
                found = session
        return found

    def csrf_ok(self, session: BrowserSession, offered: str | None) -> bool:
        return offered is not None and _same(offered, session.csrf)

    @property
    def sessions(self) -> int:
        return len(self._sessions)

    def rotate(self) -> str:
        """A new token, from now on the only one; every browser session ends with the old."""
        new = self._rotate_file() if self._rotate_file is not None else secrets.token_urlsafe(32)
        if self._token is not None:
            self._token = new
        self._sessions.clear()
        return new
