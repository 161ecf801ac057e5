"""Issue 23, rotation: `habitat host token --rotate` revokes the old token and its browser
sessions in the running host at once; `habitat host token` never prints a token it rejects.

The two tests with a running host share the module's host (tests/security/conftest.py); the
rotation's test is the one that logs a browser in, so its session is the one to revoke."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import httpx2
import pytest

from agent_habitat.reach import ensure_host
from agent_habitat.reach.launcher import host_files

from .browser_login import habitat_cli, login, session_cookie

pytestmark = [pytest.mark.e2e, pytest.mark.finding("rotation")]


def scene_status(base: str, **kwargs: object) -> int:
    return httpx2.get(f"{base}/api/shell_scene", timeout=30, **kwargs).status_code  # type: ignore[arg-type]


def test_rotate_revokes_the_old_token_and_every_session_at_once(shared_project: Path) -> None:
    project = shared_project
    base, page = login(project)
    name, secret = session_cookie(base, page)
    old = host_files(project).token()
    assert scene_status(base, headers={"Authorization": f"Bearer {old}"}) == 200
    assert scene_status(base, cookies={name: secret}) == 200
    code, out, err = habitat_cli("host", "token", "--rotate", "--project", str(project), "--json")
    assert code == 0, err
    answer = json.loads(out)
    new = answer["token"]
    assert new != old
    assert answer["rotated"] is True
    assert answer["sessions_revoked"] == 1
    assert scene_status(base, headers={"Authorization": f"Bearer {old}"}) == 401
    assert scene_status(base, params={"token": old}) == 401
    assert scene_status(base, cookies={name: secret}) == 401
    assert scene_status(base, headers={"Authorization": f"Bearer {new}"}) == 200
    files = host_files(project)
    assert files.token_file.read_text(encoding="utf-8").strip() == new
    assert stat.S_IMODE(files.token_file.stat().st_mode) == 0o600
    code, out, _ = habitat_cli("host", "token", "--project", str(project))
    assert (code, out.strip()) == (0, new)


def test_host_token_prints_what_the_host_accepts_after_the_file_was_deleted(
    shared_project: Path,
) -> None:
    project = shared_project
    record = ensure_host(project, tcp="127.0.0.1:0").record
    assert record.tcp is not None
    files = host_files(project)
    running = files.token()
    files.token_file.unlink()
    code, out, err = habitat_cli("host", "token", "--project", str(project))
    assert code == 0, err
    printed = out.strip()
    assert printed == running
    assert scene_status(record.tcp, headers={"Authorization": f"Bearer {printed}"}) == 200
    assert files.token_file.read_text(encoding="utf-8").strip() == running


def test_rotate_without_a_host_replaces_the_file(project: Path) -> None:
    files = host_files(project)
    files.prepare()
    old = files.token()
    code, out, _ = habitat_cli("host", "token", "--rotate", "--project", str(project))
    assert code == 0
    assert out.strip() != old
    assert files.token_file.read_text(encoding="utf-8").strip() == out.strip()
