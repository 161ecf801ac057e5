"""Helpers the dashboard's browser tests and its latency bench share: find Debian chromium
and axe-core, make a fixture project, log a page into a host."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

from agent_habitat.cli import main

__all__ = ["AXE_JS", "axe_path", "chromium_path", "dashboard_url", "make_repo"]

REPO = Path(__file__).resolve().parents[2]
AXE_JS = REPO / ".bench-cache" / "axe-core" / "node_modules" / "axe-core" / "axe.min.js"


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


def axe_path() -> tuple[Path | None, str]:
    """axe-core's axe.min.js, installed from npm by `make test` into .bench-cache/."""
    path = Path(os.environ.get("HABITAT_AXE_JS") or AXE_JS)
    if not path.is_file():
        return None, (
            f"axe-core not found at {path}: `npm install --prefix .bench-cache/axe-core "
            "axe-core` (make test does it)"
        )
    return path, ""


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


def dashboard_url(root: Path) -> str:
    """`habitat dashboard --no-browser --json` in-process: the one-time login URL."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["dashboard", "--project", str(root), "--no-browser", "--json"])
    assert code == 0, out.getvalue()
    url: str = json.loads(out.getvalue())["url"]
    return url
