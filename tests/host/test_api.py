"""The JSON API in-process: derived from the verb table, errors as status codes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agent_habitat.events import EVENT_KINDS
from agent_habitat.host.app import build_app, build_mcp
from agent_habitat.verbs import PREFIX, VERBS
from agent_habitat.verify import POLICIES

pytestmark = pytest.mark.anyio

TOKEN = "test-token"
JSON = {"content-type": "application/json"}


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[httpx2.AsyncClient]:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    async with build_mcp(root) as hosted:
        app = build_app(hosted, token=TOKEN, idle_seconds=0)
        transport = httpx2.ASGITransport(app=app.asgi)
        async with httpx2.AsyncClient(
            transport=transport,
            # With a port: the ASGI scope of a port-less URL looks like a unix socket's.
            base_url="http://localhost:8765",
            headers={"authorization": f"Bearer {TOKEN}"},
            timeout=30,
        ) as client:
            yield client
            # No run outlives the test.
            scene = (await client.get("/api/shell_scene")).json()
            for tab in scene["tabs"]:
                if tab["state"] == "running":
                    await client.post(
                        "/api/shell_kill", json={"tab": tab["name"], "signal": "KILL"}
                    )


async def test_the_verb_index_names_every_row_with_its_schemas(api: httpx2.AsyncClient) -> None:
    index = (await api.get("/api/verbs")).raise_for_status().json()
    assert [v["name"] for v in index] == [v.tool_name(PREFIX) for v in VERBS]
    run = next(v for v in index if v["name"] == "shell_run")
    assert run["group"] == "shell"
    assert run["read_only"] is False
    assert run["get"] is False
    assert "command" in run["args"]["properties"]
    assert "exit_code" in run["result"]["properties"]
    scene = next(v for v in index if v["name"] == "shell_scene")
    assert scene["read_only"] is True
    assert scene["get"] is True


async def test_a_run_answers_with_its_result_model(api: httpx2.AsyncClient) -> None:
    response = await api.post("/api/shell_run", json={"command": "echo hi", "tab": "t1"})
    assert response.status_code == 200
    result = response.json()
    assert (result["tab"], result["state"], result["exit_code"]) == ("t1", "exited", 0)
    assert result["output"] == "hi\n"
    scene = (await api.get("/api/shell_scene")).json()
    assert [t["name"] for t in scene["tabs"]] == ["t1"]
    history = (await api.get("/api/shell_history", params={"tab": "t1", "limit": "5"})).json()
    assert [r["command"] for r in history["rows"]] == ["echo hi"]


async def test_bad_arguments_are_400_naming_the_field(api: httpx2.AsyncClient) -> None:
    response = await api.post("/api/shell_run", json={"command": "true", "tab": "no spaces"})
    assert response.status_code == 400
    assert response.json()["field"] == "tab"
    assert "tab" in response.json()["error"]
    response = await api.post("/api/shell_run", json={"tab": "x"})
    assert (response.status_code, response.json()["field"]) == (400, "command")
    response = await api.post("/api/shell_run", content=b"{not json", headers=JSON)
    assert response.status_code == 400
    assert "not JSON" in response.json()["error"]
    response = await api.post("/api/shell_run", json=["echo"])
    assert response.status_code == 400


async def test_a_missing_tab_is_404_and_a_busy_one_409(api: httpx2.AsyncClient) -> None:
    response = await api.post("/api/shell_last", json={"tab": "nowhere"})
    assert response.status_code == 404
    assert set(response.json()) == {"error", "field"}
    started = await api.post(
        "/api/shell_run", json={"command": "sleep 30", "tab": "busy", "background": True}
    )
    assert started.json()["state"] == "running"
    response = await api.post("/api/shell_run", json={"command": "true", "tab": "busy"})
    assert response.status_code == 409
    assert "sleep 30" in response.json()["error"]
    killed = await api.post("/api/shell_kill", json={"tab": "busy"})
    assert killed.json()["killed"] is True


async def test_get_is_only_for_read_only_verbs_without_required_args(
    api: httpx2.AsyncClient,
) -> None:
    assert (await api.get("/api/shell_scene")).status_code == 200
    refused = await api.get("/api/shell_run")
    assert refused.status_code == 405
    assert "POST" in refused.json()["error"]
    assert (await api.get("/api/shell_kill")).status_code == 405
    assert (await api.post("/api/no_such_verb", json={})).status_code == 404


async def test_meta_serves_every_event_kind_and_each_policys_rungs(
    api: httpx2.AsyncClient,
) -> None:
    meta = (await api.get("/api/meta")).raise_for_status().json()
    assert meta["event_kinds"] == list(EVENT_KINDS)
    assert {"shell.run.exited", "verify.epoch.finished", "journal.gap"} <= set(meta["event_kinds"])
    assert meta["policies"] == {name: list(rungs) for name, rungs in POLICIES.items()}
    assert meta["policies"]["minimal"] == ["diagnose.files"]


async def test_the_api_is_behind_the_guard(api: httpx2.AsyncClient) -> None:
    request = api.build_request("POST", "/api/shell_scene", json={})
    del request.headers["authorization"]
    bare = await api.send(request)
    assert bare.status_code == 401
    request = api.build_request("GET", "/api/meta")
    del request.headers["authorization"]
    assert (await api.send(request)).status_code == 401
    rebound = await api.get("/api/verbs", headers={"host": "evil.example"})
    assert rebound.status_code == 421


async def test_a_post_that_is_not_json_is_refused_415_before_it_runs(
    api: httpx2.AsyncClient,
) -> None:
    response = await api.post(
        "/api/shell_run",
        content=b'{"command": "echo no", "tab": "plain"}',
        headers={"content-type": "text/plain"},
    )
    assert response.status_code == 415
    assert "application/json" in response.text
    scene = (await api.get("/api/shell_scene")).json()
    assert "plain" not in [t["name"] for t in scene["tabs"]]


_SDK_ON_DEMAND = """
import pathlib
import sys

import anyio
import httpx2

from agent_habitat.host.app import build_app, build_mcp


def sdk() -> bool:
    return "mcp" in sys.modules


async def main(root: str) -> None:
    async with build_mcp(pathlib.Path(root)) as hosted:
        app = build_app(hosted, token=None, idle_seconds=0)
        transport = httpx2.ASGITransport(app=app.asgi)
        async with hosted.mcp.serving(), httpx2.AsyncClient(
            transport=transport, base_url="http://localhost"
        ) as client:
            status = await client.get("/api/status")
            print(status.status_code, sdk())
            # No session id: the SDK's own answer, once it is built.
            answer = await client.delete("/mcp")
            print(answer.status_code, sdk())


anyio.run(main, sys.argv[1])
"""


def test_the_host_imports_the_mcp_sdk_when_mcp_is_first_asked(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-c", _SDK_ON_DEMAND, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["200 False", "400 True"], done.stdout + done.stderr


_SDK_WHEN_QUIET = """
import pathlib
import sys

import anyio

from agent_habitat.host import server
from agent_habitat.host.app import build_app, build_mcp


async def main(root: str) -> None:
    async with build_mcp(pathlib.Path(root)) as hosted:
        app = build_app(hosted, token=None, idle_seconds=0)
        async with hosted.mcp.serving():
            app.activity.open = 1  # a request in flight: the host is not quiet
            with anyio.move_on_after(3 * server.PREPARE_MCP_QUIET_SECONDS):
                await server._prepare_mcp_when_quiet(app, hosted)
            print("busy", "mcp" in sys.modules)
            app.activity.open = 0
            app.activity.touch()
            with anyio.fail_after(120):
                await server._prepare_mcp_when_quiet(app, hosted)
            print("quiet", "mcp" in sys.modules, hosted.mcp._app is not None)


anyio.run(main, sys.argv[1])
"""


def test_a_quiet_host_builds_its_mcp_side_before_the_first_request(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-c", _SDK_WHEN_QUIET, str(root)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["busy False", "quiet True True"], (
        done.stdout + done.stderr
    )


@pytest.mark.finding("under-load")
async def test_only_calls_that_can_last_watch_for_their_client_leaving(
    api: httpx2.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 23 ("Under load"): a task group and a watcher task per call were about a fifth of
    # the host's CPU for a `shell_scene`; a quick read-only verb starts nothing a departed
    # client would want cancelled, so it answers without them. A wait still stops with its
    # client.
    from agent_habitat.host import api as api_module

    watched: list[str] = []
    watch = api_module._until_disconnect

    async def recorded(request: Any, cancel: Any) -> None:
        watched.append(request.url.path)
        await watch(request, cancel)

    monkeypatch.setattr(api_module, "_until_disconnect", recorded)
    assert (await api.post("/api/shell_run", json={"command": "true"})).status_code == 200
    for route in ("shell_scene", "shell_history", "project_scene", "verify_status"):
        assert (await api.post(f"/api/{route}", json={})).status_code == 200, route
    assert (await api.post("/api/shell_last", json={"tail_lines": 5})).status_code == 200
    waited = await api.post("/api/shell_wait", json={"timeout_seconds": 0.1})
    assert waited.status_code == 200, waited.text
    assert watched == ["/api/shell_run", "/api/shell_wait"]


async def test_a_verb_call_is_matched_against_the_verbs_first(
    api: httpx2.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 23 ("Under load"): the router tries each route's regex in order, and shell_last
    # came 21st, behind the dashboard's page and assets (a twentieth of the host's CPU for
    # the call). Every path is a literal, so the order changes no answer, only the cost.
    from starlette.routing import Route

    tried: list[str] = []
    matches = Route.matches

    def counted(self: Route, scope: Any) -> Any:
        tried.append(self.path)
        return matches(self, scope)

    assert (await api.post("/api/shell_run", json={"command": "true"})).status_code == 200
    monkeypatch.setattr(Route, "matches", counted)
    for verb in VERBS:
        tried.clear()
        path = f"/api/{verb.tool_name(PREFIX)}"
        await api.post(path, json=[])  # refused as a body (400): the route is what counts
        assert tried[-1] == path
        assert len(tried) <= 1 + len(VERBS) + 2, tried  # /mcp, /api/verbs, /api/meta
        assert all("{" not in route for route in tried)
