"""Who may talk to the host: Host/Origin checks on every request, a credential on TCP.

DNS rebinding: a web page the user visits can make the browser send requests to
127.0.0.1 under the attacker's own host name. Every request must therefore name the host
as `localhost`, `127.0.0.1` or `[::1]` (any port) in `Host`; anything else gets 421.

Cross-site requests: a browser counts every port of 127.0.0.1 as one site, so a page that
any other local server shows (a project's own `python -m http.server`) can send requests
here. When the browser adds an `Origin`, it must be this host's own — scheme, name and
port, as the `Host` header names it — or the request gets 403. A POST must say it is JSON
(`Content-Type: application/json`; the MCP bridge's `application/x-ndjson` on `/mcp`): a
page elsewhere can send a `text/plain` or form POST without asking the browser first, never
a JSON one, and this host answers no CORS preflight.

On TCP every request also needs a credential (host/credentials.py):
* the workspace token, as `Authorization: Bearer TOKEN` or a `?token=TOKEN` query parameter
  (for clients that cannot set headers: the MCP conformance CLI, a first page load). Its
  cost is that the token can land where URLs go — shell history, proxy logs, the browser's
  history — so prefer the header, keep the host on loopback, and rotate the token
  (`habitat host token --rotate`) if a URL leaked;
* a browser session's cookie, and then, on anything but GET/HEAD, the session's CSRF token
  in `X-Habitat-CSRF` (the dashboard page sends it with every call);
* a one-time login code on `GET /` (host/dashboard/login.py).
The unix socket needs none: only the user can open it (0600 in a 0700 folder).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from urllib.parse import parse_qsl, urlsplit

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .credentials import CSRF_HEADER, Credentials, cookie_name

__all__ = [
    "AUTH_SCOPE_KEY",
    "LOOPBACK_NAMES",
    "SESSION_SCOPE_KEY",
    "Guard",
    "over_tcp",
    "server_port",
]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
AUTH_SCOPE_KEY = "habitat.auth"
"""How the request was let in: `unix`, `bearer`, `query` (`?token=`), `session`, `login`."""
SESSION_SCOPE_KEY = "habitat.session"
"""The `BrowserSession` of a request its cookie let in."""
_JSON_TYPES = frozenset({"application/json"})
_LINE_TYPES = frozenset({"application/json", "application/x-ndjson"})
_SAFE_METHODS = frozenset({"GET", "HEAD"})

Refusal = tuple[int, str, dict[str, str]]


def _host_parts(value: str) -> tuple[str, int | None] | None:
    """(name, port) of a `Host` value `name[:port]` / `[v6][:port]`; None when malformed."""
    try:
        parts = urlsplit(f"//{value}")
        hostname = parts.hostname
        port = parts.port  # raises on a non-numeric port
    except ValueError:
        return None
    return (hostname, port) if hostname else None


def server_port(scope: Scope) -> int | None:
    """The port the request came in on; None on the unix socket."""
    server = scope.get("server")
    if isinstance(server, tuple | list) and len(server) == 2 and isinstance(server[1], int):
        return server[1]
    return None


class Guard:
    """ASGI middleware in front of every route of the host."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        credentials: Credentials,
        extra_hosts: Iterable[str] = (),
        login: Callable[[Scope], bool] | None = None,
    ) -> None:
        self.app = app
        self.credentials = credentials
        self._login = login  # the dashboard's one-time login codes (host/dashboard/login.py)
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

    def _refuse(self, scope: Scope) -> Refusal | None:
        headers = Headers(scope=scope)
        host_value = headers.get("host", "")
        host = _host_parts(host_value)
        if host is None or host[0].lower() not in self._hosts:
            return 421, "Invalid Host header: the habitat host answers only to localhost\n", {}
        origin = headers.get("origin")
        if origin is not None and not _same_origin(origin, host):
            return (
                403,
                f"Invalid Origin header: {origin} is not this host's own page "
                f"(http://{host_value}); only the host's dashboard may call it from a browser\n",
                {},
            )
        method = scope.get("method", "GET")
        if method == "POST":
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            allowed = _LINE_TYPES if scope.get("path") == "/mcp" else _JSON_TYPES
            if kind not in allowed:
                return (
                    415,
                    f"Content-Type {kind or '(none)'} refused: a POST to the host sends "
                    "`Content-Type: application/json` (a JSON body; `{}` when it has no "
                    "arguments)\n",
                    {},
                )
        if _over_unix(scope):
            scope[AUTH_SCOPE_KEY] = "unix"
            return None
        return self._authorize(scope, headers, method)

    def _authorize(self, scope: Scope, headers: Headers, method: str) -> Refusal | None:
        auth = headers.get("authorization", "")
        scheme, _, value = auth.partition(" ")
        if scheme.lower() == "bearer" and value and self.credentials.bearer_ok([value.strip()]):
            scope[AUTH_SCOPE_KEY] = "bearer"
            return None
        query = scope.get("query_string", b"").decode("latin-1")
        offered = [v for k, v in parse_qsl(query) if k == "token"]
        if offered and self.credentials.bearer_ok(offered):
            scope[AUTH_SCOPE_KEY] = "query"
            return None
        cookie = cookie_parser(headers.get("cookie", "")).get(cookie_name(server_port(scope)))
        session = self.credentials.session(cookie) if cookie else None
        if session is not None:
            if method not in _SAFE_METHODS and not self.credentials.csrf_ok(
                session, headers.get(CSRF_HEADER)
            ):
                return (
                    403,
                    "Missing or wrong X-Habitat-CSRF header: a browser session's calls carry "
                    "the page's CSRF token (reload the dashboard)\n",
                    {},
                )
            scope[AUTH_SCOPE_KEY] = "session"
            scope[SESSION_SCOPE_KEY] = session
            return None
        if self._login is not None and self._login(scope):
            scope[AUTH_SCOPE_KEY] = "login"
            return None
        return (
            401,
            "Missing or wrong token: send `Authorization: Bearer TOKEN` "
            "(`habitat host token` prints it; `habitat dashboard` logs a browser in)\n",
            {"WWW-Authenticate": 'Bearer realm="agent-habitat"'},
        )


def _same_origin(origin: str, host: tuple[str, int | None]) -> bool:
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    default = 443 if parts.scheme == "https" else 80
    name, host_port = host
    return parts.hostname.lower() == name.lower() and (port or default) == (host_port or default)


def _over_unix(scope: Scope) -> bool:
    # uvicorn reports a unix socket's address as (path, None); anything else, including
    # no address at all, is treated as the network and must carry a credential.
    server = scope.get("server")
    return isinstance(server, tuple | list) and len(server) == 2 and server[1] is None


def over_tcp(scope: Scope) -> bool:
    """True for a request from the network (anything but the unix socket)."""
    return not _over_unix(scope)
