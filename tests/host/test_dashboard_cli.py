"""`habitat dashboard` without a browser: the URL it prints, and a host it cannot use."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from agent_habitat.cli import main
from agent_habitat.host import ensure_host, find_host

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


def test_dashboard_names_the_fix_for_a_host_without_tcp(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ensure_host(project)
    assert main(["dashboard", "--project", str(project), "--no-browser"]) == 1
    err = capsys.readouterr().err
    assert "runs without TCP" in err
    assert "habitat host stop && habitat dashboard" in err
