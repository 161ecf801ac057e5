"""The dashboard's page routes and its one-time login, behind the real Guard (no browser)."""

from __future__ import annotations

import httpx2
import pytest
from starlette.applications import Starlette

from agent_habitat.host.credentials import Credentials, cookie_name
from agent_habitat.host.dashboard import Logins, dashboard_routes
from agent_habitat.host.dashboard.login import LOGIN_TTL_SECONDS
from agent_habitat.host.guard import Guard

pytestmark = pytest.mark.anyio

TOKEN = "s3cret-token"
COOKIE = cookie_name(8765)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def client(
    logins: Logins,
    base_url: str = "http://127.0.0.1:8765",
    credentials: Credentials | None = None,
) -> httpx2.AsyncClient:
    credentials = credentials or Credentials(TOKEN)
    app = Starlette(routes=dashboard_routes(credentials=credentials, logins=logins))
    guarded = Guard(app, credentials=credentials, login=logins.redeem)
    # A URL with a port looks like TCP to the Guard (see test_guard.py), one without like the
    # unix socket.
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=guarded), base_url=base_url)


async def test_the_page_over_tcp_needs_the_token() -> None:
    async with client(Logins()) as c:
        page = await c.get("/")
        script = await c.get("/dashboard/app.js")
    assert [page.status_code, script.status_code] == [401, 401]


async def test_a_login_code_works_once_and_sets_a_strict_httponly_session_cookie() -> None:
    logins = Logins()
    code = logins.issue()
    async with client(logins) as c:
        first = await c.get(f"/?login={code}")
        c.cookies.clear()
        second = await c.get(f"/?login={code}")
    assert first.status_code == 200
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    assert TOKEN not in cookie  # a session secret, never the token
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie
    assert second.status_code == 401


@pytest.mark.finding("login-code")  # issue 23: a short life, besides the owner-only file
async def test_a_login_code_expires() -> None:
    clock = Clock()
    logins = Logins(clock=clock)
    code = logins.issue()
    clock.now += LOGIN_TTL_SECONDS + 1
    async with client(logins) as c:
        response = await c.get(f"/?login={code}")
    assert response.status_code == 401


async def test_a_login_code_opens_only_the_page_not_the_api() -> None:
    logins = Logins()
    code = logins.issue()
    async with client(logins) as c:
        response = await c.get(f"/dashboard/app.js?login={code}")
    assert response.status_code == 401
    assert not logins.redeem({"path": "/x", "method": "GET", "query_string": b""})


async def test_a_session_cookie_authorizes_the_page_and_its_files_and_the_token_does_not() -> None:
    credentials = Credentials(TOKEN)
    session = credentials.open_session()
    async with client(Logins(), credentials=credentials) as c:
        c.cookies.set(COOKIE, session.secret)
        page = await c.get("/")
        style = await c.get("/dashboard/app.css")
        c.cookies.set(COOKIE, TOKEN)
        token_as_cookie = await c.get("/")
    assert [page.status_code, style.status_code, token_as_cookie.status_code] == [200, 200, 401]
    assert "set-cookie" not in page.headers  # only a login or ?token= sets it
    assert f'<meta name="habitat-csrf" content="{session.csrf}">' in page.text


async def test_the_page_ships_its_own_files_under_a_strict_policy() -> None:
    async with client(Logins(), base_url="http://localhost") as c:
        page = await c.get("/")
        script = await c.get("/dashboard/app.js")
        style = await c.get("/dashboard/app.css")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy
    assert "script-src 'self'" in policy
    assert page.headers["referrer-policy"] == "no-referrer"
    assert script.headers["content-type"].startswith("text/javascript")
    assert style.headers["content-type"].startswith("text/css")
    # Nothing is fetched from the network: every src/href is this host's own path.
    for text in (page.text, style.text):
        assert "http://" not in text.replace("http://www.w3.org", "")
        assert "https://" not in text


async def test_a_login_code_is_issued_over_the_unix_socket() -> None:
    logins = Logins()
    async with client(logins, base_url="http://localhost") as c:
        response = await c.post("/api/dashboard/login", json={})
    body = response.json()
    assert body["path"] == f"/?login={body['login']}"
    assert logins.redeem({"path": "/", "method": "GET", "query_string": body["path"][2:].encode()})


async def test_login_codes_are_not_issued_over_tcp() -> None:
    async with client(Logins()) as c:
        response = await c.post(
            "/api/dashboard/login", json={}, headers={"Authorization": f"Bearer {TOKEN}"}
        )
    assert response.status_code == 403
