"""One-time login codes for the dashboard.

`habitat dashboard` asks the host (over its unix socket, where only the user can connect)
for a code. The first `GET /?login=CODE` is let through by the Guard and opens a browser
session (host/credentials.py: a cookie that is never the token); the page then removes the
code from the address bar. A code works once and only for `LOGIN_TTL_SECONDS`, so the URL
is worthless in shell history or a screenshot afterwards, unlike a `?token=` URL.

The code must not travel where other local users can read it: a browser's command line is
world-readable (`/proc/PID/cmdline`), so `habitat dashboard` never passes the URL there. It
writes a small page that forwards to the URL into the state folder (0600 in a 0700 folder)
and opens that file instead, as Jupyter does: only the owner can read the code.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from html import escape
from urllib.parse import parse_qsl

from starlette.types import Scope

__all__ = ["LOGIN_TTL_SECONDS", "Logins", "forward_page"]

LOGIN_TTL_SECONDS = 120.0
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
                    return True
        return False


def forward_page(url: str) -> str:
    """A page that sends the browser on to `url` (the login URL) at once."""
    shown = escape(url, quote=True)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="refresh" content="0;url={shown}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        "<title>agent-habitat dashboard</title></head>\n"
        f'<body><p>Opening the dashboard… <a href="{shown}">continue</a> '
        "(this login works once, for two minutes).</p></body></html>\n"
    )
