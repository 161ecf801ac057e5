"""Helpers the dashboard's browser tests and its latency bench share: find Debian chromium
and axe-core, start it, make a fixture project, log a page into a host."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from agent_habitat.cli import main

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, ViewportSize

__all__ = [
    "AXE_JS",
    "VIEWS",
    "axe_or_skip",
    "axe_path",
    "chromium_or_skip",
    "chromium_path",
    "dashboard_url",
    "make_repo",
    "make_sample",
    "serious_violations",
]

REPO = Path(__file__).resolve().parents[2]
AXE_JS = REPO / ".bench-cache" / "axe-core" / "node_modules" / "axe-core" / "axe.min.js"
VIEWS = ("Tabs", "Verify epoch", "Timeline", "Events")
SIZES: tuple[ViewportSize, ...] = ({"width": 1280, "height": 800}, {"width": 400, "height": 800})


def chromium_path() -> tuple[str | None, str]:
    """Debian's chromium (Playwright's own browser download cannot work here), or why not."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        return (
            None,
            "no chromium on PATH: `apt-get install -y chromium` (make test does it as root)",
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return None, "playwright is not installed: `pip install -e '.[dev]'`"
    return path, ""


@contextlib.contextmanager
def chromium_or_skip() -> Iterator[Browser]:
    """A headless Debian chromium for a test module; the test skips, saying why, without one."""
    path, why = chromium_path()
    if path is None:
        pytest.skip(why)
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=path)
        except Error as exc:
            pytest.skip(f"chromium at {path} does not start headless: {exc}")
        try:
            yield launched
        finally:
            launched.close()


def axe_path() -> tuple[Path | None, str]:
    """axe-core's axe.min.js, installed from npm by `make test` into .bench-cache/."""
    path = Path(os.environ.get("HABITAT_AXE_JS") or AXE_JS)
    if not path.is_file():
        return None, (
            f"axe-core not found at {path}: `npm install --prefix .bench-cache/axe-core "
            "axe-core` (make test does it)"
        )
    return path, ""


def axe_or_skip() -> Path:
    path, why = axe_path()
    if path is None:
        pytest.skip(why)
    return path


def serious_violations(page: Page, axe: Path) -> dict[str, list[str]]:
    """axe-core's serious and critical violations in every view at 1280×800 and 400 px wide,
    by `view @ width`. The page must have been opened with `bypass_csp` (axe is injected)."""
    page.add_script_tag(path=str(axe))
    found: dict[str, list[str]] = {}
    for size in SIZES:
        page.set_viewport_size(size)
        for view in VIEWS:
            page.get_by_role("tab", name=view).click()
            result = page.evaluate("async () => (await axe.run(document)).violations")
            serious = [
                f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes'][:3]]}"
                for v in result
                if v["impact"] in ("serious", "critical")
            ]
            if serious:
                found[f"{view} @ {size['width']}px"] = serious
    return found


def make_repo(root: Path) -> Path:
    """A small git project with one committed Python file."""
    root.mkdir(parents=True, exist_ok=True)
    env = os.environ | {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    (root / "calc.py").write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    for argv in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "init"]):
        subprocess.run(argv, cwd=root, env=env, check=True, capture_output=True)
    return root


# HEAD has an unused import: a pre-existing finding, counted and folded, never red.
TEXT_AT_HEAD = (
    '"""Text helpers."""\n\nimport sys\n\n\ndef shout(s: str) -> str:\n    return s.upper() + "!"\n'
)


def make_sample(root: Path, extra: dict[str, str] | None = None) -> Path:
    """The demo's sample project (package, tests, pyproject; `python` is this interpreter)
    with a pre-existing finding and `extra` files committed, and a change to verify (a clean
    tree has nothing to verify): the verify views of the tests and the screenshots."""
    from agent_habitat.cli.demo_sample import build_sample

    build_sample(root)
    for rel, text in {"src/calc/text.py": TEXT_AT_HEAD, **(extra or {})}.items():
        (root / rel).write_text(text, encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "add", "-A"], cwd=root, check=True, capture_output=True)
    subprocess.run([*git, "commit", "-qm", "fixture"], cwd=root, check=True, capture_output=True)
    (root / "src/calc/text.py").write_text(TEXT_AT_HEAD + "\nX = 1\n", encoding="utf-8")
    return root


def dashboard_url(root: Path) -> str:
    """`habitat dashboard --no-browser --json` in-process: the one-time login URL."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["dashboard", "--project", str(root), "--no-browser", "--json"])
    assert code == 0, out.getvalue()
    url: str = json.loads(out.getvalue())["url"]
    return url
