"""Issue 23, CSRF: a page on another loopback port cannot act through a logged-in dashboard.

A real host with loopback TCP, logged in as `habitat dashboard` logs a browser in; the
attacks are the requests such a page can make without a CORS preflight. The module's tests
share one host, each logged in with a session of its own; no test opens the tab an attack
would ("evil").
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx2
import pytest

from agent_habitat.reach.launcher import host_files

from .browser_login import login, session_cookie

pytestmark = [pytest.mark.e2e, pytest.mark.finding("csrf")]

CSRF = re.compile(r'<meta name="habitat-csrf" content="([^"]+)">')


@pytest.fixture
def project(shared_project: Path) -> Path:
    """The module's host (tests/security/conftest.py), started once for its four tests."""
    return shared_project


def scene_tabs(base: str, token: str) -> list[str]:
    scene = httpx2.get(
        f"{base}/api/shell_scene", headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    return [t["name"] for t in scene.raise_for_status().json()["tabs"]]


def test_a_page_on_another_loopback_port_is_refused_by_its_origin(project: Path) -> None:
    base, page = login(project)
    name, secret = session_cookie(base, page)
    csrf = CSRF.search(page.text)
    assert csrf is not None
    other = re.sub(r":(\d+)$", lambda m: f":{int(m.group(1)) + 1}", base)
    response = httpx2.post(
        f"{base}/api/shell_run",
        json={"command": "echo pwned", "tab": "evil"},
        headers={"Origin": other, "X-Habitat-CSRF": csrf.group(1)},
        cookies={name: secret},
        timeout=30,
    )
    assert response.status_code == 403
    assert "Origin" in response.text
    assert "evil" not in scene_tabs(base, host_files(project).token())


def test_a_text_plain_post_is_refused_without_running_anything(project: Path) -> None:
    base, page = login(project)
    name, secret = session_cookie(base, page)
    # What a <form enctype="text/plain"> or fetch(no-cors) sends: no preflight needed.
    response = httpx2.post(
        f"{base}/api/shell_run",
        content=b'{"command": "echo pwned", "tab": "evil"}',
        headers={"Content-Type": "text/plain"},
        cookies={name: secret},
        timeout=30,
    )
    assert response.status_code == 415
    assert "application/json" in response.text
    assert "evil" not in scene_tabs(base, host_files(project).token())


def test_a_cookie_without_the_pages_csrf_token_cannot_act(project: Path) -> None:
    base, page = login(project)
    name, secret = session_cookie(base, page)
    csrf = CSRF.search(page.text)
    assert csrf is not None
    run = {"command": "echo hi", "tab": "t1"}
    bare = httpx2.post(f"{base}/api/shell_run", json=run, cookies={name: secret}, timeout=30)
    wrong = httpx2.post(
        f"{base}/api/shell_run",
        json=run,
        cookies={name: secret},
        headers={"X-Habitat-CSRF": "guessed"},
        timeout=30,
    )
    good = httpx2.post(
        f"{base}/api/shell_run",
        json=run,
        cookies={name: secret},
        headers={"X-Habitat-CSRF": csrf.group(1), "Origin": base},
        timeout=30,
    )
    assert [bare.status_code, wrong.status_code] == [403, 403]
    assert "X-Habitat-CSRF" in bare.text
    assert good.status_code == 200, good.text
    assert good.json()["output"] == "hi\n"


def test_bearer_clients_need_no_csrf_token_and_no_origin(project: Path) -> None:
    base, _ = login(project)
    token = host_files(project).token()
    response = httpx2.post(
        f"{base}/api/shell_run",
        json={"command": "echo bearer", "tab": "cli"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    assert response.json()["output"] == "bearer\n"
