"""One-time login codes for the dashboard.

`habitat dashboard` asks the host (over its unix socket, where only the user can connect)
for a code and prints `http://127.0.0.1:PORT/?login=CODE`. The first `GET /` with that code
is let through by the Guard and answered with the workspace token as an HttpOnly,
SameSite=Strict cookie; the page then removes the code from the address bar. A code works
once and only for a short while, so the URL is worthless in shell history or a screenshot
afterwards, unlike a `?token=` URL.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from urllib.parse import parse_qsl

from starlette.types import Scope

__all__ = ["COOKIE", "LOGIN_SCOPE_KEY", "LOGIN_TTL_SECONDS", "Logins"]

COOKIE = "habitat_token"
"""The cookie the Guard accepts in place of `Authorization: Bearer`."""
LOGIN_TTL_SECONDS = 300.0
LOGIN_SCOPE_KEY = "habitat.login"
"""Set in the ASGI scope of the request that redeemed a code: the page sets the cookie."""
_MAX_OPEN = 32


class Logins:
    """Codes issued and not yet redeemed (in memory: a restarted host forgets them)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._open: dict[str, float] = {}

    def issue(self) -> str:
        now = self._clock()
        self._open = {c: t for c, t in self._open.items() if t > now}
        while len(self._open) >= _MAX_OPEN:  # the oldest goes; nobody needs 32 open logins
            self._open.pop(next(iter(self._open)))
        code = secrets.token_urlsafe(24)
        self._open[code] = now + LOGIN_TTL_SECONDS
        return code

    def redeem(self, scope: Scope) -> bool:
        """The Guard's hook: True (once) for `GET /?login=CODE` with a live code."""
        if scope.get("path") != "/" or scope.get("method") != "GET":
            return False
        query = scope.get("query_string", b"").decode("latin-1")
        offered = [v for k, v in parse_qsl(query) if k == "login"]
        now = self._clock()
        for code, expires in list(self._open.items()):
            if any(hmac.compare_digest(o.encode(), code.encode()) for o in offered):
                del self._open[code]
                if expires > now:
                    scope[LOGIN_SCOPE_KEY] = True
                    return True
        return False
