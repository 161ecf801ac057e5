"""Log a plain HTTP client into a real host as its dashboard page would be (no browser)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from urllib.parse import urlsplit

import httpx2

from agent_habitat.cli import main
from agent_habitat.host.credentials import cookie_name

__all__ = ["habitat_cli", "login"]


def habitat_cli(*argv: str) -> tuple[int, str, str]:
    """`habitat …` in-process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def login(root: Path) -> tuple[str, httpx2.Response]:
    """`habitat dashboard --no-browser` (starting the host with TCP), then the URL loaded
    as a browser loads it: the host's base URL and the page's answer."""
    code, out, err = habitat_cli("dashboard", "--project", str(root), "--no-browser", "--json")
    assert code == 0, err
    url = json.loads(out)["url"]
    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}"
    page = httpx2.get(url, timeout=30)
    assert page.status_code == 200, page.text
    return base, page


def session_cookie(base: str, page: httpx2.Response) -> tuple[str, str]:
    """(name, value) of the session cookie the login set."""
    name = cookie_name(urlsplit(base).port)
    value = page.cookies.get(name)
    assert value, f"no {name} cookie in {page.headers.get_list('set-cookie')}"
    return name, value
