"""Who may talk to the host: Host/Origin checks on every request, a bearer token on TCP.

DNS rebinding: a web page the user visits can make the browser send requests to
127.0.0.1 under the attacker's own host name. Every request must therefore name the host
as `localhost`, `127.0.0.1` or `[::1]` (any port) in `Host`, and, when the browser adds an
`Origin`, that origin must be one of those too; anything else gets 421 / 403.

On TCP every request also needs the workspace token, as `Authorization: Bearer TOKEN` or
as a `?token=TOKEN` query parameter (compared in constant time). The query form exists for
clients that cannot set headers (the MCP conformance CLI, a browser opening the
dashboard); its cost is that the token can land where URLs go — shell history, proxy and
server logs, the browser's history and `Referer` headers — so prefer the header, keep the
host on loopback, and rotate the token (delete the `token` file) if a URL leaked. Jupyter
makes the same trade. The unix socket needs no token: only the user can open it (0600 in
a 0700 folder).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable
from urllib.parse import parse_qsl, urlsplit

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .dashboard.login import COOKIE

__all__ = ["LOOPBACK_NAMES", "Guard", "over_tcp"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def _hostname(value: str) -> str | None:
    """`name` of a `Host` value `name[:port]` / `[v6][:port]`; None when malformed."""
    try:
        parts = urlsplit(f"//{value}")
        hostname = parts.hostname
        _ = parts.port  # raises on a non-numeric port
    except ValueError:
        return None
    return hostname


class Guard:
    """ASGI middleware in front of every route of the host."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        extra_hosts: Iterable[str] = (),
        login: Callable[[Scope], bool] | None = None,
    ) -> None:
        self.app = app
        self._login = login  # the dashboard's one-time login codes (host/dashboard/login.py)
        self._token = token.encode() if token else None
        self._hosts = LOOPBACK_NAMES | {h.lower() for h in extra_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        problem = self._refuse(scope)
        if problem is not None:
            status, text, headers = problem
            await PlainTextResponse(text, status_code=status, headers=headers)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refuse(self, scope: Scope) -> tuple[int, str, dict[str, str]] | None:
        headers = Headers(scope=scope)
        host = _hostname(headers.get("host", ""))
        if host is None or host.lower() not in self._hosts:
            return 421, "Invalid Host header: the habitat host answers only to localhost\n", {}
        origin = headers.get("origin")
        if origin is not None and not self._origin_ok(origin):
            return 403, "Invalid Origin header: only localhost pages may call the host\n", {}
        if over_tcp(scope) and not self._authorized(scope, headers):
            return (
                401,
                "Missing or wrong token: send `Authorization: Bearer TOKEN` "
                "(`habitat host token` prints it)\n",
                {"WWW-Authenticate": 'Bearer realm="agent-habitat"'},
            )
        return None

    def _origin_ok(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin)
            _ = parts.port
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and (parts.hostname or "") in self._hosts

    def _authorized(self, scope: Scope, headers: Headers) -> bool:
        if self._token is None:
            return False  # TCP without a token is never served (the host refuses to bind so)
        offered: list[str] = []
        auth = headers.get("authorization", "")
        scheme, _, value = auth.partition(" ")
        if scheme.lower() == "bearer" and value:
            offered.append(value.strip())
        query = scope.get("query_string", b"").decode("latin-1")
        offered.extend(v for k, v in parse_qsl(query) if k == "token")
        # The dashboard's HttpOnly SameSite=Strict cookie (a browser cannot set headers on
        # EventSource); SameSite=Strict keeps other sites' pages from sending it along.
        cookie = cookie_parser(headers.get("cookie", "")).get(COOKIE)
        if cookie:
            offered.append(cookie)
        # Every candidate is compared (no early exit) so timing says nothing about which.
        results = [hmac.compare_digest(o.encode(), self._token) for o in offered]
        return any(results) or (self._login is not None and self._login(scope))


def over_tcp(scope: Scope) -> bool:
    # uvicorn reports a unix socket's address as (path, None); anything else, including
    # no address at all, is treated as the network and must carry the token.
    server = scope.get("server")
    return not (isinstance(server, tuple | list) and len(server) == 2 and server[1] is None)
