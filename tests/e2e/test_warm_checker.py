"""The warm checkers of `compile.project`: basedpyright's and ty's language servers in a
habitat server (real servers, real CLIs, a real git project), with the same findings as a
cold CLI run of the same tree, owned by the process that started them; pyrefly cold."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import psutil
import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.habitat import Habitat
from agent_habitat.testing.conditions import eventually
from agent_habitat.trust import ProjectTrust
from agent_habitat.verify import LadderRequest, LadderResult, run_ladder
from agent_habitat.verify.models import RungResult
from agent_habitat.verify.rungs import pyright_tools, warm_checker
from agent_habitat.verify.runner.warmup import warm_lines
from agent_habitat.workspace import Workspace
from git_tree import commit_tree

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

BIN = Path(sys.executable).parent
CORE = """\
def area(width: int, height: int) -> int:
    return width * height


def old_mistake() -> int:
    return "this was wrong at HEAD already"
"""
USER = """\
from shapes.core import area


def double(width: int) -> int:
    return area(width, 2) * 2
"""


def _project(tmp_path: Path, table: str) -> Path:
    files = {
        "pyproject.toml": f'[project]\nname = "shapes"\nversion = "0.1"\n\n[{table}]\n',
        "shapes/__init__.py": "",
        "shapes/core.py": CORE,
        "shapes/user.py": USER,
    }
    return commit_tree(tmp_path / "shapes", files)


def _edit(root: Path, old: str, new: str) -> None:
    path = root / "shapes/core.py"
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def _findings(rung: RungResult) -> list[tuple[object, ...]]:
    return sorted(
        (d.file, d.line, d.col, d.code, d.severity, d.message, d.preexisting)
        for d in rung.diagnostics
    )


async def _cold(root: Path) -> RungResult:
    # The tool's CLI, cold (this process's warm server, where there is one, left aside).
    request = LadderRequest(rungs=["compile.project"])
    environ = {**os.environ, "HABITAT_LADDER_WARM_CHECKER": "false"}
    bus = InMemoryEventBus(str(root))
    result: LadderResult = await run_ladder(root, request, bus=bus, environ=environ)
    (rung,) = result.rungs
    return rung


async def _warm(habitat: Habitat) -> RungResult:
    runner = habitat.verify
    assert runner is not None
    with anyio.fail_after(120):
        ticket = await runner.request(LadderRequest(rungs=["compile.project"]), wait=True)
    assert ticket.result is not None
    assert ticket.result.result is not None
    (rung,) = ticket.result.result.rungs
    return rung


@pytest.fixture
def server_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "true")
    monkeypatch.setenv("HABITAT_COALESCE_SECONDS", "0")
    monkeypatch.setenv("HABITAT_LADDER_PYTHON", sys.executable)


@pytest.mark.parametrize(
    ("table", "tool", "new_code"),
    [
        ("tool.basedpyright", "basedpyright", "reportReturnType"),
        ("tool.ty", "ty", "invalid-explicit-return"),
    ],
)
async def test_the_warm_language_server_finds_what_a_cold_run_finds_and_stops_with_its_owner(
    tmp_path: Path, server_env: None, table: str, tool: str, new_code: str
) -> None:
    assert (BIN / tool).is_file(), "the dev install brings it"
    root = _project(tmp_path, table)
    ProjectTrust().grant_sync(root, "verb")  # the warm-up runs only a trusted project's code
    workspace = Workspace.for_project(root)
    async with Habitat.open(workspace, project=root) as habitat:
        warm = habitat.verifier.warmup
        assert warm is not None
        with anyio.fail_after(120):
            await warm.wait()
        item = warm.items["type_daemon"]
        assert item.state == "warm", warm.items
        assert "language server pid" in item.detail
        (server,) = warm_checker.live(workspace)
        assert (server["tool"], server["owner"]) == (tool, os.getpid())
        assert f"{tool} language server pid {server['pid']}" in warm_checker.describe(workspace)

        # A change whose error shows in the module that imports it, not in its own.
        _edit(root, "-> int:\n    return width * height", "-> str:\n    return str(width * height)")
        red = await _warm(habitat)
        assert (red.tool, red.state) == (tool, "red"), red
        assert any("warm language server" in n for n in red.notes), red.notes
        new = {(d.file, d.code) for d in red.diagnostics if not d.preexisting}
        assert new == {("shapes/user.py", new_code)}, red.diagnostics
        assert red.preexisting_findings >= 1, "HEAD's old_mistake is pre-existing"
        cold = await _cold(root)
        assert any("ran cold" in n for n in cold.notes), cold.notes
        assert (cold.state, _findings(cold)) == ("red", _findings(red))

        # Reverted: the server is told, and agrees with a cold run again.
        _edit(
            root,
            "-> str:\n    return str(width * height)",
            "-> int:\n    return width * height + 0",
        )
        green = await _warm(habitat)
        assert (green.state, green.new_findings) == ("green", 0), green
        cold = await _cold(root)
        assert (cold.state, _findings(cold)) == ("green", _findings(green))
        pid = server["pid"]
        assert psutil.pid_exists(pid)

    # Closed with its owner: the server is gone, and the status says so.
    def gone() -> bool:
        try:
            return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
        except psutil.NoSuchProcess:
            return True

    await eventually(gone, within=10)
    assert warm_checker.live(workspace) == []
    assert any("the language server has exited since" in ln for ln in warm_lines(workspace))


async def test_pyrefly_is_checked_cold_and_baseline_aware(tmp_path: Path) -> None:
    assert (BIN / "pyrefly").is_file(), "the dev install brings it"
    root = _project(tmp_path, "tool.pyrefly")
    _edit(root, "    return width * height", '    return "wide"')
    red = await _cold(root)
    assert (red.tool, red.state) == ("pyrefly", "red"), red
    new = [(d.file, d.code) for d in red.diagnostics if not d.preexisting]
    assert new == [("shapes/core.py", "bad-return")], red.diagnostics
    assert red.preexisting_findings == 1
    assert any("pyrefly ran cold" in n for n in red.notes)
    _edit(root, '    return "wide"', "    return width * height + 0")
    green = await _cold(root)
    assert (green.state, green.new_findings, green.preexisting_findings) == ("green", 0, 1)


@pytest.mark.parametrize("tool", ["ty", "pyrefly"])
async def test_a_configured_checker_that_is_not_installed_is_skipped_with_its_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    root = _project(tmp_path, f"tool.{tool}")
    monkeypatch.setattr(pyright_tools, "OWN_BIN", tmp_path / "no-such-bin")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("HABITAT_LADDER_PYTHON", str(Path(sys.base_prefix) / "bin" / "python3"))
    _edit(root, "    return width * height", "    return width * height + 0")
    rung = await _cold(root)
    assert rung.state == "skipped", rung
    assert rung.missing is not None
    assert rung.missing.endswith(f"-m pip install {tool}")
    assert f"configures {tool}, which is not installed" in (rung.reason or "")
