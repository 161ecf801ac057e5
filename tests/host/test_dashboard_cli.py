"""`habitat dashboard` without a browser: the URL it prints, on a host it starts or on one
running without TCP (which opens a loopback listener when asked)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from agent_habitat.cli import main
from agent_habitat.reach import ensure_host, find_host

pytestmark = pytest.mark.e2e


def test_dashboard_starts_a_tcp_host_and_prints_a_one_time_login(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["dashboard", "--project", str(project), "--no-browser", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    record = find_host(project)
    assert record is not None
    assert out["started"] is True
    assert out["host_pid"] == record.pid
    assert out["opened"] is False
    url = urlsplit(out["url"])
    assert f"{url.scheme}://{url.netloc}" == record.tcp
    assert url.path == "/"
    code = parse_qs(url.query)["login"][0]
    with httpx2.Client(base_url=record.tcp, timeout=10) as client:
        assert client.get("/", params={"login": "wrong"}).status_code == 401
        assert client.get("/", params={"login": code}).status_code == 200


def test_dashboard_opens_tcp_on_a_running_host_without_it_and_keeps_the_host(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The natural order: the agent's `habitat mcp` started the host (no TCP), with a run going.
    started = ensure_host(project).record
    assert started.tcp is None
    transport = httpx2.HTTPTransport(uds=started.socket)
    with httpx2.Client(transport=transport, base_url="http://localhost", timeout=30) as local:
        ran = local.post(
            "/api/shell_run", json={"command": "sleep 600", "tab": "warm", "background": True}
        )
        assert ran.status_code == 200, ran.text
        assert main(["dashboard", "--project", str(project), "--no-browser", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        record = find_host(project)
        assert record is not None
        assert (out["started"], out["host_pid"], record.pid) == (False, started.pid, started.pid)
        assert record.tcp is not None
        assert record.tcp.startswith("http://127.0.0.1:")
        url = urlsplit(out["url"])
        assert f"{url.scheme}://{url.netloc}" == record.tcp
        code = parse_qs(url.query)["login"][0]
        with httpx2.Client(base_url=record.tcp, timeout=10) as remote:
            # Same security as a host started with --tcp: the token or a login, Host checked.
            assert remote.get("/api/status").status_code == 401
            assert remote.get("/", headers={"Host": "evil.example"}).status_code == 421
            assert remote.get("/", params={"login": code}).status_code == 200
            status = local.get("/api/status").json()  # the socket's owner needs no token
            assert status["tcp"] == record.tcp
            # Only the socket's owner may open a listener.
            bearer = {"Authorization": f"Bearer {_token(project)}"}
            assert remote.post("/api/host/tcp", json={}, headers=bearer).status_code == 403
        scene = local.get("/api/shell_scene").json()
        assert [t["state"] for t in scene["tabs"] if t["name"] == "warm"] == ["running"]
        # Asked again, the host answers with the listener it has.
        assert main(["dashboard", "--project", str(project), "--no-browser", "--json"]) == 0
        again = json.loads(capsys.readouterr().out)
        assert urlsplit(again["url"]).netloc == url.netloc
        # Runs outlive the host: this one ends with the test.
        assert local.post("/api/shell_kill", json={"tab": "warm"}).json()["killed"] is True


def _token(project: Path) -> str:
    from agent_habitat.reach.launcher import host_files

    return host_files(project).token()
