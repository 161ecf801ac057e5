"""The warm tsc's rung (`compile.project`) and lifecycle: warm in a server's climb, cold in a
one-shot (it keeps no warm checker); HEAD's errors from the same process with HEAD's text laid
over; started by the warm-up, listed, started again after it died, saying so; stopped with its
owner. tsc's own output is held in test_node_tsc_warm.py."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from agent_habitat.proc import ProcessRecord, is_alive
from agent_habitat.testing import eventually
from agent_habitat.verify.rungs import warm_checker
from agent_habitat.workspace import Workspace
from git_tree import git, write
from node_tsc import USE as _USE
from node_tsc import compile_rung as _compile
from node_tsc import project as _project
from node_warm import warm_up_starts

pytestmark = pytest.mark.anyio


@pytest.mark.timeout(600)
async def test_compile_project_warm_in_a_server_cold_one_shot_head_from_the_overlay(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    workspace = Workspace.for_project(root)
    write(root, "src/area.ts", _USE.replace("s.size * s.size", "s.size * s.kind"))
    try:
        cold = await _compile(root, server=False)
        assert cold.state == "red"
        assert "--incremental" in cold.command
        assert any("one-shot verify keeps no warm checker" in n for n in cold.notes)
        assert warm_checker.live(workspace) == []

        warm = await _compile(root, server=True)
        assert warm.state == "red", warm
        assert any("the warm checker" in n for n in warm.notes), warm.notes
        assert [(d.file, d.line, d.code, d.preexisting) for d in warm.diagnostics] == [
            (d.file, d.line, d.code, d.preexisting) for d in cold.diagnostics
        ]
        assert [(d.file, d.preexisting) for d in warm.diagnostics] == [
            ("src/area.ts", False),
            ("src/old.ts", True),
        ]
        [listed] = warm_checker.live(workspace)
        assert (listed["tool"], listed["kind"], listed["owner"]) == ("tsc", "checker", os.getpid())
        assert "warm: tsc checker pid" in warm_checker.describe(workspace)

        # A new HEAD whose old.ts is fixed: HEAD's errors come from the warm checker with
        # HEAD's text of the changed files laid over the disk's.
        write(root, "src/old.ts", "export const n: number = 1;\n")
        git(root, "commit", "-qm", "fix old", "--", "src/old.ts")
        write(root, "src/old.ts", "export const n: number = 'y';\n")
        again = await _compile(root, server=True)
        assert [(d.file, d.preexisting) for d in again.diagnostics] == [
            ("src/area.ts", False),
            ("src/old.ts", False),
        ]

        # The checker dies: the next verify starts another and says so.
        os.kill(listed["pid"], signal.SIGKILL)
        # The kill lands when the kernel next runs the checker, which on a loaded machine can
        # be after the verify below looked: wait (bounded) until it is gone, so that verify
        # meets a checker that had exited, not one dying in the middle of its check.
        await eventually(lambda: not is_alive(ProcessRecord(listed["pid"], 0.0)), within=60)
        back = await _compile(root, server=True)
        assert back.state == "red"
        assert any("had exited; started again" in n for n in back.notes), back.notes
        [relisted] = warm_checker.live(workspace)
        assert relisted["pid"] != listed["pid"]
    finally:
        assert await warm_checker.release(workspace)
    assert warm_checker.live(workspace) == []


@pytest.mark.timeout(600)
async def test_the_warm_up_starts_the_checker_and_it_stops_with_its_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await warm_up_starts(_project(tmp_path), monkeypatch, "tsc", "tsc checker pid")
