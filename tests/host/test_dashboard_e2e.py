"""The dashboard in a real headless Chromium against a real host on a fixture project.

Debian's `chromium` driven by Playwright (`executable_path`): these tests skip, saying
why, when the browser, Playwright or axe-core is missing. Every wait is Playwright's
auto-waiting `expect` with a bound; the host is stopped by the `project` fixture, or after
the module for the tests that only read from a host and share one (`shared_project`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx2
import pytest
from dashboard_browser import (
    axe_or_skip,
    chromium_or_skip,
    dashboard_url,
    make_repo,
    serious_violations,
)

from agent_habitat.host.credentials import cookie_name
from agent_habitat.reach import find_host

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, ViewportSize

pytestmark = pytest.mark.e2e

WAIT_MS = 10_000
NARROW: ViewportSize = {"width": 400, "height": 800}
WIDE: ViewportSize = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium_or_skip() as launched:
        yield launched


@pytest.fixture
def repo(project: Path) -> Path:
    """The fixture project (a git repo); `project` stops its host afterwards."""
    return make_repo(project)


@pytest.fixture(scope="module")
def module_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture project of the module's shared host (tests/host/conftest.py)."""
    return make_repo(tmp_path_factory.mktemp("module-project") / "project")


@pytest.fixture
def page(browser: Browser, repo: Path, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A page logged into the host of `repo` (started with loopback TCP), live.
    `@pytest.mark.parametrize("page", [{"bypass_csp": True}], indirect=True)` lets a test
    inject a script (axe-core), which the page's policy otherwise refuses."""
    with logged_in(browser, repo, getattr(request, "param", {})) as page:
        yield page


@pytest.fixture
def shared_page(browser: Browser, shared_project: Path) -> Iterator[Page]:
    """A page logged into the module's shared host: for a test that needs no fresh one."""
    with logged_in(browser, shared_project, {}) as page:
        yield page


@contextmanager
def logged_in(browser: Browser, repo: Path, options: dict[str, Any]) -> Iterator[Page]:
    from playwright.sync_api import expect

    context = browser.new_context(viewport=WIDE, **options)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(dashboard_url(repo))
    expect(page.locator("#conn")).to_have_text("live", timeout=WAIT_MS)
    yield page
    context.close()
    assert errors == [], f"script errors on the page: {errors}"


def habitat(*argv: str, code: int = 0) -> str:
    """The CLI as a person runs it: its own process (Playwright's sync API holds this
    thread's event loop, so an in-process `anyio.run` could not start here anyway)."""
    done = subprocess.run(
        [sys.executable, "-m", "agent_habitat", *argv],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == code, done.stderr
    return done.stdout


def scene(repo: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(habitat("scene", "--project", str(repo), "--json"))
    return result


def test_the_token_is_required_over_tcp_and_the_login_leaves_the_address_bar(
    shared_page: Page, shared_project: Path
) -> None:
    record = find_host(shared_project)
    assert record is not None
    assert record.tcp is not None
    with httpx2.Client(base_url=record.tcp, timeout=10) as client:
        assert client.get("/").status_code == 401
        assert client.get("/events").status_code == 401
        assert client.post("/api/shell_scene", json={}).status_code == 401
    assert urlsplit(shared_page.url).query == ""
    cookies = {c["name"]: c for c in shared_page.context.cookies()}
    name = cookie_name(urlsplit(record.tcp).port)
    assert cookies[name]["httpOnly"] is True
    assert cookies[name]["sameSite"] == "Strict"
    assert shared_page.evaluate("document.cookie") == ""  # HttpOnly: no script reads it


def test_a_used_login_url_does_not_log_in_again(browser: Browser, shared_project: Path) -> None:
    url = dashboard_url(shared_project)
    first = browser.new_context()
    second = browser.new_context()
    try:
        assert first.new_page().goto(url).status == 200  # type: ignore[union-attr]
        assert second.new_page().goto(url).status == 401  # type: ignore[union-attr]
    finally:
        first.close()
        second.close()


def test_a_cli_run_appears_live_and_the_page_kills_it(
    shared_page: Page, shared_project: Path
) -> None:
    from playwright.sync_api import expect

    command = "for i in $(seq 1 2000); do echo line $i; sleep 0.02; done"
    habitat("run", "--project", str(shared_project), "--tab", "work", "--background", command)
    card = shared_page.locator("li.tab[data-tab='work']")
    expect(card).to_have_attribute("data-state", "running", timeout=WAIT_MS)
    expect(card.locator(".tab-cmd")).to_contain_text("seq 1 2000")
    expect(card.locator(".tail")).to_contain_text("line 5", timeout=WAIT_MS)

    card.get_by_role("button", name="Kill the command in tab work").click()
    expect(card).to_have_attribute("data-state", "idle", timeout=WAIT_MS)
    expect(card.locator(".tab-result")).to_contain_text("killed")
    tab = next(t for t in scene(shared_project)["tabs"] if t["name"] == "work")
    assert tab["state"] == "idle"
    assert tab["last_run"]["state"] == "killed"


def test_the_command_line_runs_in_a_tab_and_shows_the_exit_code(shared_page: Page) -> None:
    from playwright.sync_api import expect

    page = shared_page  # tab `build` is this test's alone on the module's host
    page.get_by_role("textbox", name="Tab", exact=True).fill("build")
    page.get_by_role("textbox", name="Command").fill("echo built; exit 3")
    page.get_by_role("button", name="Run", exact=True).click()
    card = page.locator("li.tab[data-tab='build']")
    expect(card.locator(".tab-result")).to_contain_text("exit 3", timeout=WAIT_MS)
    expect(card).to_have_attribute("data-result", "bad")
    expect(card.locator(".tab-state")).to_contain_text("✗")  # not by colour alone
    page.get_by_role("tab", name="Events").click()
    # Newest first: this run's exit, whatever the module's other tests ran before.
    expect(page.locator("tr[data-kind='shell.run.exited']").first).to_contain_text("exit 3")


def test_the_page_asks_the_host_for_nothing_it_does_not_serve(
    browser: Browser, shared_project: Path
) -> None:
    # Chromium asks a page with no icon for /favicon.ico, which the host does not serve: every
    # load of the dashboard logged "Failed to load resource: ... 404" in the console.
    # The module's host: tab `main` is this test's alone there.
    from playwright.sync_api import expect

    context = browser.new_context(viewport=WIDE)
    page = context.new_page()
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("console", lambda m: failed.append(m.text) if m.type == "error" else None)
    try:
        page.goto(dashboard_url(shared_project))
        expect(page.locator("#conn")).to_have_text("live", timeout=WAIT_MS)
        # Activity after the load, long enough for the browser's own icon request to end.
        page.get_by_role("textbox", name="Command").fill("echo after-load")
        page.get_by_role("button", name="Run", exact=True).click()
        card = page.locator("li.tab[data-tab='main']")
        expect(card.locator(".tab-result")).to_contain_text("exit 0", timeout=WAIT_MS)
        page.reload()
        expect(page.locator("#conn")).to_have_text("live", timeout=WAIT_MS)
        expect(card.locator(".tab-result")).to_contain_text("exit 0", timeout=WAIT_MS)
    finally:
        context.close()
    assert failed == []


def test_keyboard_shortcuts_are_listed_with_question_mark_and_focus_tab_n(
    shared_page: Page, shared_project: Path
) -> None:
    from playwright.sync_api import expect

    habitat("run", "--project", str(shared_project), "--tab", "one", "true")
    expect(shared_page.locator("li.tab[data-tab='one']")).to_be_visible(timeout=WAIT_MS)
    shared_page.keyboard.press("?")
    help_dialog = shared_page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(help_dialog).to_be_visible()
    expect(help_dialog).to_contain_text("kill the focused tab")
    shared_page.keyboard.press("Escape")
    expect(help_dialog).to_be_hidden()
    shared_page.keyboard.press("Shift+E")
    expect(shared_page.get_by_role("tab", name="Events")).to_have_attribute("aria-selected", "true")
    shared_page.keyboard.press("1")
    expect(shared_page.locator("li.tab").first).to_be_focused()


def test_the_events_view_filters_by_kind(page: Page, repo: Path) -> None:
    from playwright.sync_api import expect

    habitat("run", "--project", str(repo), "true")
    page.get_by_role("tab", name="Events").click()
    expect(page.locator("tr[data-kind='shell.run.exited']")).to_have_count(1, timeout=WAIT_MS)
    page.get_by_label("Kind").select_option("host.")
    expect(page.locator("tr[data-kind='shell.run.exited']")).to_have_count(0)
    expect(page.locator("tr[data-kind='host.started']")).to_have_count(1)


def test_the_narrow_layout_fits_400_pixels(shared_page: Page, shared_project: Path) -> None:
    from playwright.sync_api import expect

    habitat("run", "--project", str(shared_project), "--tab", "a-long-tab-name", "echo x")
    expect(shared_page.locator("li.tab[data-tab='a-long-tab-name']")).to_be_visible(timeout=WAIT_MS)
    shared_page.set_viewport_size(NARROW)
    for view in ("Tabs", "Verify epoch", "Timeline", "Events"):
        shared_page.get_by_role("tab", name=view).click()
        overflow = shared_page.evaluate("document.documentElement.scrollWidth")
        assert overflow <= NARROW["width"], f"{view}: {overflow}px wide at 400px"
    shared_page.get_by_role("tab", name="Tabs").click()
    box = shared_page.locator("li.tab").first.bounding_box()
    assert box is not None
    assert box["width"] <= NARROW["width"]


@pytest.mark.parametrize("page", [{"bypass_csp": True}], indirect=True)
def test_no_serious_accessibility_violations_in_any_view_wide_or_narrow(
    page: Page, repo: Path
) -> None:
    from playwright.sync_api import expect

    axe = axe_or_skip()
    habitat("run", "--project", str(repo), "--tab", "t1", "echo ok")
    habitat("run", "--project", str(repo), "--tab", "t2", "exit 1", code=1)
    expect(page.locator("li.tab")).to_have_count(2, timeout=WAIT_MS)
    assert serious_violations(page, axe) == {}
