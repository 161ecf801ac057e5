"""The dashboard's screenshots (docs/dashboard-*.png), taken by bench/latency/dashboard_latency.py
`--screenshots DIR` on its live host: the Tabs view with eight tabs printing (wide and
400 px), then a real verify from the page on the sample project (green, then stale after a
write), the timeline, the events and the shortcuts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[2]
WIDE = {"width": 1280, "height": 800}
NARROW = {"width": 400, "height": 800}
VERIFY_BOUND_MS = 240_000  # a cold dmypy and pytest on a loaded machine


def load_helpers() -> Any:
    """dashboard_browser.py beside this (chromium, the sample project), which the dashboard's
    browser tests share."""
    import dashboard_browser

    return dashboard_browser


def sample_project(root: Path) -> Path:
    path: Path = load_helpers().make_sample(root)
    return path


def _save(page: Any, folder: Path, slug: str, saved: list[str]) -> None:
    path = folder / f"dashboard-{slug}.png"
    page.screenshot(path=str(path))
    saved.append(str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path))


def screenshots(
    page: Any, api: httpx2.Client, repo: Path, folder: Path, printers: int
) -> list[str]:
    """Every view, in the order that shows each at its most telling; returns the paths."""
    from playwright.sync_api import expect

    folder.mkdir(parents=True, exist_ok=True)
    saved: list[str] = []
    page.set_viewport_size(WIDE)
    page.get_by_role("tab", name="Tabs").click()
    expect(page.locator("li.tab")).to_have_count(printers + 1)
    _save(page, folder, "tabs", saved)
    page.set_viewport_size(NARROW)
    _save(page, folder, "narrow", saved)
    page.set_viewport_size(WIDE)
    for n in range(printers):  # the verify below should not wait behind them
        api.post("/api/shell_kill", json={"tab": f"print{n + 1}"})

    page.get_by_role("tab", name="Verify epoch").click()
    page.get_by_role("button", name="Verify (v)").click()
    expect(page.locator("#verify-badge")).to_contain_text("✓ green", timeout=VERIFY_BOUND_MS)
    _save(page, folder, "verify", saved)
    report = repo / "src/calc/report.py"  # as an editor saves it
    report.write_text(report.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    banner = page.get_by_role("alert")
    expect(banner).to_contain_text("src/calc/report.py", timeout=30_000)
    expect(banner).to_contain_text("current is", timeout=30_000)  # the status caught up
    _save(page, folder, "verify-stale", saved)

    page.get_by_role("tab", name="Timeline").click()
    page.get_by_label("Window").select_option("300")
    _save(page, folder, "timeline", saved)
    page.get_by_role("tab", name="Events").click()
    _save(page, folder, "events", saved)
    page.keyboard.press("?")
    _save(page, folder, "help", saved)
    page.keyboard.press("Escape")
    return saved
