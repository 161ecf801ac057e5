"""Epochs across host restarts, on the real page: numbers go on from the last host's, and the
journal's replay of an earlier host's stale epoch never raises the banner over a fresh one.

A real host on the sample project (restarted once), the real page in a headless Chromium;
every wait is Playwright's `expect` with a bound.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from dashboard_browser import chromium_or_skip, dashboard_url, make_sample

from agent_habitat.reach import find_host, stop_host

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.e2e

WAIT_MS = 10_000
# A cold ruff on a loaded two-core machine, through the host.
VERIFY_S = 120

# Records whether the stale banner was ever shown, from before the page's own scripts run.
WATCH_BANNER = """
window.staleShown = [];
new MutationObserver(() => {
  const banner = document.getElementById("stale");
  if (banner && !banner.hidden) window.staleShown.push(banner.textContent);
}).observe(document, { subtree: true, attributes: true, childList: true });
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium_or_skip() as launched:
        yield launched


@pytest.fixture
def calc(tmp_path: Path) -> Iterator[Path]:
    root = make_sample(tmp_path / "calc")
    yield root
    stop_host(root)


def _api(root: Path, verb: str, body: dict[str, Any]) -> dict[str, Any]:
    record = find_host(root)
    assert record is not None
    transport = httpx2.HTTPTransport(uds=record.socket)
    with httpx2.Client(
        transport=transport, base_url="http://localhost", timeout=VERIFY_S
    ) as client:
        answer = client.post(f"/api/{verb}", json=body)
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = json.loads(answer.text)
    return result


def test_a_restarted_host_numbers_on_and_an_old_stale_epoch_never_shows(
    browser: Browser, calc: Path
) -> None:
    from playwright.sync_api import expect

    dashboard_url(calc)  # starts the host
    first = _api(calc, "verify_run", {"policy": "minimal", "wait": True})
    text = calc / "src/calc/text.py"
    text.write_text(text.read_text(encoding="utf-8") + "Y = 2\n", encoding="utf-8")
    assert _api(calc, "verify_status", {})["stale"] is True  # journalled as stale
    stop_host(calc)

    url = dashboard_url(calc)  # a new host
    second = _api(calc, "verify_run", {"policy": "minimal", "wait": True})
    assert second["epoch"] > first["epoch"]
    assert second["state"] == "green"

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.add_init_script(WATCH_BANNER)
        page.goto(url)
        expect(page.locator("#conn")).to_have_text("live", timeout=WAIT_MS)
        badge = page.locator("#verify-badge")
        expect(badge).to_contain_text(f"green (epoch {second['epoch']})", timeout=WAIT_MS)
        # The replayed journal, the first host's stale epoch included, has been applied.
        replayed = page.locator("#event-rows tr[data-kind='verify.epoch.stale']")
        expect(replayed).to_have_count(1, timeout=WAIT_MS)
        page.get_by_role("tab", name="Verify epoch").click()
        expect(page.get_by_role("alert")).to_be_hidden()
        assert page.evaluate("window.staleShown") == []
    finally:
        context.close()
