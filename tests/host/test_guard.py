"""The Guard in front of every route: Host/Origin checks, the token on TCP."""

from __future__ import annotations

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from agent_habitat.host.credentials import Credentials
from agent_habitat.host.guard import Guard

pytestmark = pytest.mark.anyio

TOKEN = "s3cret-token"


async def hello(request: Request) -> Response:
    return PlainTextResponse("hello")


def client(base_url: str) -> httpx2.AsyncClient:
    app = Guard(Starlette(routes=[Route("/x", hello)]), credentials=Credentials(TOKEN))
    # The ASGI transport reports the URL's (host, port) as the server address: a URL
    # without a port looks like the unix socket (no port), one with a port like TCP.
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=base_url)


async def test_a_unix_socket_request_needs_no_token() -> None:
    async with client("http://localhost") as c:
        response = await c.get("/x")
    assert response.status_code == 200
    assert response.text == "hello"


async def test_a_tcp_request_without_the_token_is_refused_with_401() -> None:
    async with client("http://127.0.0.1:8765") as c:
        missing = await c.get("/x")
        wrong = await c.get("/x", headers={"Authorization": "Bearer nope"})
        wrong_query = await c.get("/x?token=nope")
    assert [missing.status_code, wrong.status_code, wrong_query.status_code] == [401, 401, 401]
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert "habitat host token" in missing.text


async def test_a_tcp_request_with_the_token_in_the_header_or_query_passes() -> None:
    async with client("http://127.0.0.1:8765") as c:
        header = await c.get("/x", headers={"Authorization": f"Bearer {TOKEN}"})
        query = await c.get(f"/x?token={TOKEN}")
    assert [header.status_code, query.status_code] == [200, 200]


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.evil.example:80", "10.0.0.1:8765"])
async def test_a_foreign_host_header_gets_421(host: str) -> None:
    async with client("http://localhost") as c:
        response = await c.get("/x", headers={"Host": host})
    assert response.status_code == 421


@pytest.mark.parametrize("host", ["localhost", "localhost:9", "127.0.0.1:8765", "[::1]:8765"])
async def test_loopback_host_headers_pass(host: str) -> None:
    async with client("http://localhost") as c:
        response = await c.get("/x", headers={"Host": host})
    assert response.status_code == 200


async def test_a_foreign_origin_gets_403_and_the_hosts_own_passes() -> None:
    async with client("http://localhost") as c:
        evil = await c.get("/x", headers={"Origin": "http://evil.example"})
        own = await c.get("/x", headers={"Origin": "http://localhost"})
    assert evil.status_code == 403
    assert own.status_code == 200


async def test_without_a_token_configured_tcp_is_never_served() -> None:
    app = Guard(Starlette(routes=[Route("/x", hello)]), credentials=Credentials(None))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:1") as c:
        response = await c.get("/x?token=")
    assert response.status_code == 401
