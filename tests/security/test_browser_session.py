"""Issue 23, the cookie: a browser gets a revocable session secret, never the bearer token,
in a cookie named for the host's port. The module's tests share one host (each logs in with
a session of its own); the test of two hosts starts the second."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest

from agent_habitat.host.credentials import COOKIE_PREFIX, cookie_name
from agent_habitat.reach.launcher import host_files

from .browser_login import login, session_cookie

pytestmark = [pytest.mark.e2e, pytest.mark.finding("cookie")]


@pytest.fixture
def project(shared_project: Path) -> Path:
    """The module's host (tests/security/conftest.py), started once for its tests."""
    return shared_project


def test_the_browser_never_receives_the_bearer_token(project: Path) -> None:
    base, page = login(project)
    token = host_files(project).token()
    set_cookie = " ".join(page.headers.get_list("set-cookie"))
    assert token not in set_cookie
    assert token not in page.text
    name, secret = session_cookie(base, page)
    assert secret != token
    # The session works as a browser uses it, and the token is no cookie here at all.
    ok = httpx2.get(f"{base}/api/shell_scene", cookies={name: secret}, timeout=30)
    token_cookie = httpx2.get(f"{base}/api/shell_scene", cookies={name: token}, timeout=30)
    assert [ok.status_code, token_cookie.status_code] == [200, 401]


def test_two_hosts_give_cookies_of_their_own_names(project: Path, tmp_path: Path) -> None:
    from agent_habitat.reach import stop_host

    other = tmp_path / "two"
    (other / ".git").mkdir(parents=True)
    roots = [project, other]  # the module's host, and a second one this test starts
    try:
        bases = []
        jar: dict[str, str] = {}
        for root in roots:
            base, page = login(root)
            name, secret = session_cookie(base, page)
            assert name.startswith(COOKIE_PREFIX)
            jar[name] = secret
            bases.append(base)
        # One browser holds both cookies; each host takes its own, neither logs the other out.
        assert len(jar) == 2
        for base in bases:
            port = urlsplit(base).port
            assert cookie_name(port) in jar
            response = httpx2.get(f"{base}/api/shell_scene", cookies=jar, timeout=30)
            assert response.status_code == 200, response.text
    finally:
        stop_host(other)


def test_a_session_cookie_from_another_port_does_not_open_this_host(project: Path) -> None:
    base, page = login(project)
    _, secret = session_cookie(base, page)
    port = urlsplit(base).port
    assert port is not None
    wrong_name = {cookie_name(port + 1): secret}
    response = httpx2.get(f"{base}/api/shell_scene", cookies=wrong_name, timeout=30)
    assert response.status_code == 401
