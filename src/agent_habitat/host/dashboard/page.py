"""The dashboard's routes: the page at `/`, its scripts and style, the login code issuer.

The files ship inside the package (`importlib.resources`) and are read once. The
page is served with a strict Content-Security-Policy (only this host's own script, style
and connections) and `no-referrer`, so nothing on it can reach elsewhere or leak the URL.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..credentials import BrowserSession, Credentials, cookie_name
from ..guard import AUTH_SCOPE_KEY, SESSION_SCOPE_KEY, server_port
from .login import Logins

__all__ = ["dashboard_routes"]

_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_HEADERS = {
    "Content-Security-Policy": _CSP,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
_JS = "text/javascript; charset=utf-8"
_FILES = {
    "index.html": "text/html; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    # The page's ES modules: app.js imports the rest.
    "app.js": _JS,
    "core.js": _JS,
    "events.js": _JS,
    "tabs.js": _JS,
    "timeline.js": _JS,
    "verify.js": _JS,
}


@cache
def _asset(name: str) -> bytes:
    return files(__package__ or __name__).joinpath(name).read_bytes()


_CSRF_SLOT = b'<meta name="habitat-csrf" content="">'


def _page(csrf: str | None) -> bytes:
    html = _asset("index.html")
    if csrf is None:
        return html
    # The token is URL-safe base64: nothing in it needs escaping in an attribute.
    return html.replace(_CSRF_SLOT, f'<meta name="habitat-csrf" content="{csrf}">'.encode(), 1)


def dashboard_routes(*, credentials: Credentials, logins: Logins) -> list[BaseRoute]:
    """`/`, `/dashboard/<script or style>`, `POST /api/dashboard/login`."""

    async def page(request: Request) -> Response:
        how = request.scope.get(AUTH_SCOPE_KEY)
        session: BrowserSession | None = request.scope.get(SESSION_SCOPE_KEY)
        opened = how in ("login", "query") and credentials.token is not None
        if opened:
            # A redeemed code, or a `?token=` the Guard accepted: from now on the session's
            # cookie does it (never the token), and the page takes the query out of the bar.
            session = credentials.open_session()
        response = Response(
            _page(session.csrf if session else None),
            media_type=_FILES["index.html"],
            headers=_HEADERS,
        )
        if opened and session is not None:
            # A session cookie: closing the browser logs out; `habitat dashboard` logs in again.
            response.set_cookie(
                cookie_name(server_port(request.scope)),
                session.secret,
                httponly=True,
                samesite="strict",
                path="/",
            )
        return response

    def asset(name: str) -> Route:
        async def serve(request: Request) -> Response:
            return Response(_asset(name), media_type=_FILES[name], headers=_HEADERS)

        return Route(f"/dashboard/{name}", serve, methods=["GET"])

    async def login(request: Request) -> Response:
        if request.scope.get(AUTH_SCOPE_KEY) != "unix":
            # Only the owner issues logins: a session or a leaked URL cannot mint more.
            return JSONResponse(
                {"error": "login codes are issued over the unix socket only", "field": None},
                status_code=403,
            )
        code = logins.issue()
        return JSONResponse({"login": code, "path": f"/?login={code}"})

    return [
        Route("/", page, methods=["GET"]),
        *(asset(name) for name in _FILES if name != "index.html"),
        Route("/api/dashboard/login", login, methods=["POST"]),
    ]
