"""Issue 23, the one-time login code: it never sits on a browser's command line
(`/proc/PID/cmdline` is readable by every local user). `habitat dashboard` hands the browser
an owner-only file that forwards to the login URL; tried in a real Chromium. The module's
tests share one host, each `habitat dashboard` handing out a code of its own."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx2
import pytest
from dashboard_browser import chromium_or_skip

from agent_habitat.cli import dashboard_cmd
from agent_habitat.host.credentials import cookie_name
from agent_habitat.host.dashboard.login import LOGIN_TTL_SECONDS
from agent_habitat.reach import find_host

from .browser_login import habitat_cli

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.e2e, pytest.mark.finding("login-code")]

WAIT_MS = 30_000


@pytest.fixture
def project(shared_project: Path) -> Path:
    """The module's host (tests/security/conftest.py), started once for its tests."""
    return shared_project


def open_dashboard(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """`habitat dashboard` as a person runs it, with the browser launch recorded: the
    login URL it printed and what it gave the browser."""
    given: list[str] = []

    def browser(url: str) -> bool:
        given.append(url)
        return True

    monkeypatch.setattr(dashboard_cmd, "_open", browser)
    code, out, err = habitat_cli("dashboard", "--project", str(root), "--json")
    assert code == 0, err
    assert len(given) == 1
    return json.loads(out)["url"], given[0]


def test_the_browser_is_given_an_owner_only_file_never_the_code(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, given = open_dashboard(project, monkeypatch)
    code = dict(p.split("=", 1) for p in urlsplit(url).query.split("&"))["login"]
    assert given.startswith("file://")
    assert code not in given  # what lands on the browser's command line
    page = Path(urlsplit(given).path)
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    assert stat.S_IMODE(page.parent.stat().st_mode) == 0o700
    assert code in page.read_text(encoding="utf-8")
    assert LOGIN_TTL_SECONDS <= 120


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium_or_skip() as launched:
        yield launched


def test_chromium_logs_in_through_the_file_and_the_file_works_once(
    browser: Browser, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.sync_api import expect

    url, given = open_dashboard(project, monkeypatch)
    base = urlsplit(url)
    first = browser.new_context()
    second = browser.new_context()
    try:
        page = first.new_page()
        page.goto(given)
        expect(page.locator("#conn")).to_have_text("live", timeout=WAIT_MS)
        assert urlsplit(page.url).netloc == base.netloc
        assert urlsplit(page.url).query == ""  # the code left the address bar
        cookies = {c["name"]: c for c in first.cookies()}
        assert cookies[cookie_name(base.port)]["httpOnly"] is True
        # The page acts (a CSRF-checked POST) through its session: a run in a tab.
        page.evaluate(
            "async () => { const m = await import('/dashboard/core.js');"
            " return await m.api('shell_run', {command: 'echo via-page', tab: 'page'}); }"
        )
        record = find_host(project)
        assert record is not None
        transport = httpx2.HTTPTransport(uds=record.socket)
        with httpx2.Client(transport=transport, base_url="http://localhost", timeout=30) as c:
            scene = c.get("/api/shell_scene").raise_for_status().json()
        assert "page" in [t["name"] for t in scene["tabs"]]
        # The same file again (another browser, or a local user who copied it): refused.
        again = second.new_page()
        again.goto(given)
        expect(again.locator("body")).to_contain_text("token", timeout=WAIT_MS)
        assert not any(c["name"] == cookie_name(base.port) for c in second.cookies())
    finally:
        first.close()
        second.close()
