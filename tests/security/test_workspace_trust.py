"""Issue 23, workspace trust: opening a repository runs none of its code until its user
trusts it (`habitat trust`, `project_trust` confirmed by a person, the /project_trust
prompt, or a verify the user asks for).

The repositories here commit an interpreter (`.venv/bin/python`, and the one
`[tool.habitat.ladder] python` names) and a mypy plugin (`[tool.mypy] plugins`), each of
which writes a line to a marker file when it runs: the warm-up would run them at once when
a project opens. Each "nothing ran" is checked once
the habitat has reached the point where it waits for trust, never after a sleep.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters

from agent_habitat.reach import ensure_host, find_host
from agent_habitat.testing.conditions import eventually
from agent_habitat.trust import NOT_TRUSTED, ProjectTrust

from .browser_login import habitat_cli
from .hostile import clone_other, hostile_repo, ran, warm_env

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.finding("trust")]

BOUND_S = 120.0  # a loaded machine starts hosts and interpreters slowly
HABITAT = [sys.executable, "-m", "agent_habitat"]


@pytest.fixture
def warm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Habitats started from here warm up, as they do for a user."""
    for key, value in warm_env().items():
        if key.startswith("HABITAT_"):
            monkeypatch.setenv(key, value)


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "ran.log"


@pytest.fixture
def repo(project: Path, marker: Path, own_interpreter: None) -> Path:
    """The repository commits the interpreter it names: the suite's own for its projects
    (tests/project_venv.py) would stand in for it."""
    (project / ".git").rmdir()
    return hostile_repo(project, marker)


async def until(check: Callable[[], bool], what: str) -> None:
    try:
        await eventually(check, within=BOUND_S)
    except TimeoutError:
        pytest.fail(f"not within {BOUND_S} s: {what}")


async def cli(*argv: str) -> tuple[int, str, str]:
    """`habitat …` in-process, off this test's event loop (the CLI runs its own)."""
    return await anyio.to_thread.run_sync(lambda: habitat_cli(*argv))


def host_status(root: Path) -> dict[str, Any]:
    record = find_host(root)
    assert record is not None
    transport = httpx2.HTTPTransport(uds=record.socket)
    with httpx2.Client(transport=transport, base_url="http://localhost", timeout=30) as client:
        status: dict[str, Any] = client.get("/api/status").raise_for_status().json()
    return status


async def test_starting_the_host_runs_nothing_until_habitat_trust(
    warm: None, repo: Path, marker: Path
) -> None:
    await anyio.to_thread.run_sync(lambda: ensure_host(repo))
    await until(lambda: host_status(repo)["waiting_for_trust"], "the warm-up waits for trust")
    assert ran(marker) == []
    code, out, err = await cli("status", "--project", str(repo), "--json")
    assert NOT_TRUSTED in json.loads(out)["summary"], (code, out, err)
    assert ran(marker) == []
    code, out, err = await cli("trust", "--project", str(repo))
    assert code == 0, err
    assert "trusted" in out
    # Trusted: the warm-up goes on, and it runs the project's own interpreter, and its warm
    # dmypy the project's mypy plugin: each was held back until now.
    await until(lambda: "configured" in ran(marker), "the warm-up runs the project's python")
    await until(lambda: "mypy-plugin" in ran(marker), "the warm dmypy loads its mypy plugin")
    await until(lambda: not host_status(repo)["waiting_for_trust"], "the warm-up went on")


@asynccontextmanager
async def embedded(root: Path, **client: Any) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=HABITAT[0],
        args=[*HABITAT[1:], "mcp", "--embedded", "--project", str(root)],
        env=warm_env(),
        cwd=root,
    )
    async with Client(params, mode="legacy", **client) as connected:
        yield connected


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None, result.content
    content: dict[str, Any] = dict(result.structured_content)
    return content


def text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_habitat_mcp_runs_nothing_and_project_trust_needs_a_persons_yes(
    warm: None, repo: Path, marker: Path
) -> None:
    async with embedded(repo) as client:
        status = structured(await client.call_tool("verify_status", {}))
        scene = structured(await client.call_tool("project_scene", {}))
        refused = await client.call_tool("project_trust", {})
        after = structured(await client.call_tool("verify_status", {}))
    assert status["trusted"] is False
    assert NOT_TRUSTED in status["summary"]
    assert NOT_TRUSTED in scene["trust"]
    assert refused.is_error
    assert "habitat trust" in text(refused)  # no elicitation here: says how a person does it
    assert after["trusted"] is False
    assert ran(marker) == []
    assert not ProjectTrust().state_sync(repo).trusted


async def test_project_trust_runs_once_the_person_says_yes_through_the_client(
    warm: None, repo: Path, marker: Path
) -> None:
    asked: list[str] = []

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="decline" if len(asked) == 1 else "accept")

    async with embedded(repo, elicitation_callback=person) as client:
        declined = await client.call_tool("project_trust", {})
        assert declined.is_error
        assert "declined" in text(declined)
        assert ran(marker) == []
        accepted = await client.call_tool("project_trust", {})
        assert not accepted.is_error, text(accepted)
        await until(lambda: "configured" in ran(marker), "the warm-up starts once trusted")
        status = structured(await client.call_tool("verify_status", {}))
    assert structured(accepted)["already"] is False
    assert str(repo) in asked[0]
    assert status.get("trusted", True) is True
    assert ProjectTrust().state_sync(repo).how == "verb"


async def test_the_project_trust_prompt_is_the_persons_own_yes(
    warm: None, repo: Path, marker: Path
) -> None:
    async with embedded(repo) as client:
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert ran(marker) == []
        got = await client.get_prompt("project_trust", {})
        await until(lambda: "configured" in ran(marker), "the warm-up starts once trusted")
    assert "project_trust" in prompts
    assert "trusted" in (got.description or "")
    assert ProjectTrust().state_sync(repo).how == "prompt"


async def test_project_open_of_an_untrusted_checkout_runs_nothing(
    warm: None, tmp_path: Path, repo: Path, marker: Path
) -> None:
    start = tmp_path / "start"
    (start / ".git").mkdir(parents=True)
    try:
        await anyio.to_thread.run_sync(lambda: ensure_host(start))
        record = find_host(start)
        assert record is not None
        transport = httpx2.AsyncHTTPTransport(uds=record.socket)
        async with httpx2.AsyncClient(
            transport=transport, base_url="http://localhost", timeout=60
        ) as client:
            opened = await client.post("/api/project_open", json={"path": str(repo)})
            assert opened.status_code == 200, opened.text
            await until(
                lambda: host_status(start)["waiting_for_trust"], "the warm-up waits for trust"
            )
            status = (await client.post("/api/verify_status", json={})).json()
    finally:
        await cli("host", "stop", "--project", str(start))
    assert status["trusted"] is False
    assert ran(marker) == []


async def test_a_verify_the_user_asks_for_is_the_trust(repo: Path, marker: Path) -> None:
    assert not ProjectTrust().state_sync(repo).trusted
    code, out, err = await cli("verify", "--policy", "minimal", "--project", str(repo), "--json")
    assert code in (0, 4), (out, err)
    state = ProjectTrust().state_sync(repo)
    assert state.trusted
    assert state.how == "verify"


def test_a_different_checkout_at_the_same_path_does_not_inherit_the_trust(
    repo: Path, marker: Path
) -> None:
    trust = ProjectTrust()
    trust.grant_sync(repo, "verb")
    assert trust.state_sync(repo).trusted
    clone_other(repo)
    state = trust.state_sync(repo)
    assert not state.trusted
    assert NOT_TRUSTED in state.summary


def test_a_verifys_grant_of_a_trusted_checkout_runs_no_git(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every verify grants: once trusted, its HEAD, refs and trust file unchanged, the
    # identity (a `git rev-list`) is not read again.
    import agent_habitat.trust as trust_module

    trust = ProjectTrust()
    assert not trust.grant_sync(repo, "verify").already
    assert trust.grant_sync(repo, "verify").already

    def no_git(root: Path) -> None:
        raise AssertionError("read the identity again")

    with monkeypatch.context() as patched:
        patched.setattr(trust_module, "checkout_identity", no_git)
        assert trust.grant_sync(repo, "verify").already


def test_a_grant_reads_the_checkout_again_once_it_changed(repo: Path) -> None:
    trust = ProjectTrust()
    trust.grant_sync(repo, "verify")
    trust.grant_sync(repo, "verify")
    from agent_habitat.workspace import Workspace

    (Workspace.for_project(repo).state_dir / "trust.json").unlink()  # trust taken back
    assert not trust.grant_sync(repo, "verify").already
    clone_other(repo)
    assert not trust.grant_sync(repo, "verify").already
    assert trust.state_sync(repo).trusted


def test_a_new_commit_keeps_the_trust_of_the_checkout(repo: Path) -> None:
    trust = ProjectTrust()
    trust.grant_sync(repo, "verb")
    (repo / "more.py").write_text("Z = 3\n", encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    import subprocess

    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "more"], cwd=repo, check=True)
    assert trust.state_sync(repo).trusted


def test_trust_is_kept_private_in_the_state_folder(repo: Path) -> None:
    from agent_habitat.workspace import Workspace

    ProjectTrust().grant_sync(repo, "verb")
    path = Workspace.for_project(repo).state_dir / "trust.json"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert not (repo / "trust.json").exists()
    assert os.path.commonpath([path, repo]) != str(repo)
    assert (
        time.time() - json.loads(path.read_text(encoding="utf-8"))["roots"][str(repo)]["trusted_at"]
        < 3600
    )


def test_not_trusted_says_every_way_to_trust_with_the_command_for_this_project(
    repo: Path,
) -> None:
    # Read by a model (project_scene, verify_status): it can call project_trust, which asks
    # the person, and can give them the exact command for a terminal elsewhere.
    state = ProjectTrust().state_sync(repo)
    assert "the project_trust tool (it asks the person)" in state.summary
    assert f"`habitat trust --project {repo}`" in state.summary
