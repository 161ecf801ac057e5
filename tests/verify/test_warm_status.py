"""`habitat status`'s warm lines say what is true now: a warm-up under way lists the steps
still to come, one whose process died says it ended early, and a daemon reads as warm only
while the very process the warm-up left is alive (a host restarted since has its own)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from agent_habitat.cli.host_cmd import warm_lines as host_warm_lines
from agent_habitat.events import InMemoryEventBus
from agent_habitat.proc import process_create_time
from agent_habitat.testing import eventually
from agent_habitat.verify import deps_store
from agent_habitat.verify.runner import warmup
from agent_habitat.verify.runner.warm_status import STEPS, pytest_glance, warm_lines, warmup_glance
from agent_habitat.verify.select.memo import SelectionMemo
from agent_habitat.verify.select.testdeps import deps_store_dir
from agent_habitat.workspace import Workspace, write_private
from git_tree import commit_tree, ladder_pyproject

pytestmark = pytest.mark.anyio


def _project(tmp_path: Path) -> Path:
    files = {
        "shop/__init__.py": "",
        "shop/core.py": "def double(x: int) -> int:\n    return x * 2\n",
        "tests/test_core.py": "from shop.core import double\n",
        "pyproject.toml": ladder_pyproject("shop"),
    }
    return commit_tree(tmp_path / "shop", files, "shop")


def _previous(workspace: Workspace, owner: dict[str, float]) -> None:
    """What a warm-up of an earlier host left: a dmypy daemon and a warm pytest of its own,
    both gone with it."""
    items = {name: {"state": "skipped", "detail": "earlier", "duration_s": 0.0} for name in STEPS}
    items["type_daemon"] = {
        "state": "warm",
        "detail": "dmypy daemon (pid 13999), 1 modules checked",
        "duration_s": 2.4,
        "pid": 13999,
    }
    items["pytest"] = {"state": "skipped", "detail": "pytest not installed in /p/.venv/bin/python"}
    data = {"started_at": 1.0, "finished_at": 2.0, "owner": owner, "items": items}
    workspace.state_dir.mkdir(parents=True, exist_ok=True)
    write_private(workspace.state_dir / "warm.json", json.dumps(data))


async def _dead_owner() -> dict[str, float]:
    process = await anyio.open_process(["true"])
    created = process_create_time(process.pid) or 0.0
    await process.wait()
    return {"pid": process.pid, "create_time": created}


async def test_a_warm_up_under_way_lists_its_steps_to_come_not_the_last_ones_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "true")
    root = _project(tmp_path)
    workspace = Workspace.for_project(root)
    _previous(workspace, await _dead_owner())
    reached, release = anyio.Event(), anyio.Event()

    async def held_lint(self: warmup.WarmUp, ctx: object) -> warmup.WarmItem:
        reached.set()
        await release.wait()
        return warmup.WarmItem("warm", "HEAD's ruff findings for 2 files")

    async def no_daemon(self: warmup.WarmUp, ctx: object) -> warmup.WarmItem:
        return warmup.WarmItem("skipped", "not in this test")

    monkeypatch.setattr(warmup.WarmUp, "_lint", held_lint)
    monkeypatch.setattr(warmup.WarmUp, "_daemon", no_daemon)
    monkeypatch.setattr(warmup.WarmUp, "_pytest", no_daemon)
    up = warmup.WarmUp(
        root, workspace=workspace, bus=InMemoryEventBus(str(root)), memo=SelectionMemo()
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(up.run)
        with anyio.fail_after(60):
            await reached.wait()
        # The steps run side by side: while the lint baseline is held, the rest end.
        under_way = warm_lines(workspace)
        await eventually(lambda: "4 of 5 steps done" in warm_lines(workspace)[0], within=60)
        lines, glance = warm_lines(workspace), pytest_glance(workspace)
        host_lines = host_warm_lines(
            {"dmypy": {"state": "stopped"}, "warmup": warmup_glance(workspace)}
        )
        release.set()
    assert "warm: lint baseline: in progress" in under_way
    assert "warm: lint baseline: pending" not in under_way
    assert lines[0] == f"warm: warming up (pid {os.getpid()}), 4 of 5 steps done"
    assert lines[1].startswith("warm: import graph: warm — ")
    assert lines[3:] == [
        "warm: type daemon: skipped — not in this test",
        "warm: pytest: skipped — not in this test",
        "warm: lint baseline: in progress",
    ]
    assert not any("13999" in line or "not installed" in line for line in lines)
    assert glance == {"state": "skipped", "why": "not in this test"}  # this warm-up's
    # `habitat host status` says the same first: a warm-up under way, not "warm: nothing".
    assert host_lines[0] == (
        f"warm-up: under way (pid {os.getpid()}), 4 of 5 steps done; in progress: lint baseline"
    )
    assert warmup_glance(workspace) is None  # finished: the daemons it left speak for it
    done = warm_lines(workspace)
    assert len(done) == 5
    assert done[2] == "warm: lint baseline: warm — HEAD's ruff findings for 2 files"
    assert done[4] == "warm: pytest: skipped — not in this test"


async def test_a_warm_up_whose_process_died_says_it_ended_before_it_finished(
    tmp_path: Path,
) -> None:
    workspace = Workspace.for_project(tmp_path)
    workspace.state_dir.mkdir(parents=True, exist_ok=True)
    owner = await _dead_owner()
    items = {"import_graph": {"state": "warm", "detail": "12 modules"}}
    data = {"started_at": 1.0, "finished_at": None, "owner": owner, "items": items}
    write_private(workspace.state_dir / "warm.json", json.dumps(data))
    assert warm_lines(workspace) == [
        f"warm: the warm-up of pid {owner['pid']} ended before it finished",
        "warm: import graph: warm — 12 modules",
        "warm: test deps: not reached",
        "warm: lint baseline: not reached",
        "warm: type daemon: not reached",
        "warm: pytest: not reached",
    ]
    assert host_warm_lines({"warmup": warmup_glance(workspace)})[0] == (
        f"warm-up: pid {owner['pid']} ended before it finished (1 of 5 steps done)"
    )


async def test_a_daemon_is_warm_only_while_the_process_the_warm_up_left_lives(
    tmp_path: Path,
) -> None:
    workspace = Workspace.for_project(tmp_path)
    _previous(workspace, await _dead_owner())
    # A dmypy daemon is alive now, but not the one the warm-up started (pid 13999).
    daemon_dir = workspace.state_dir / "dmypy"
    daemon_dir.mkdir(parents=True)
    write_private(daemon_dir / "status.json", json.dumps({"pid": os.getpid()}))
    (line,) = [ln for ln in warm_lines(workspace) if "type daemon" in ln]
    assert line == "warm: type daemon: cold — the dmypy daemon has exited since"


def _recorded(workspace: Workspace, tests: list[str], at: str) -> None:
    run = deps_store.TestRun(f"r{len(tests)}", None, {}, {}, {}, tests, {}, {}, {}, recorded_at=at)
    deps_store.merge_run(deps_store_dir(workspace.state_dir), run, {}, {})


def test_the_test_deps_line_reads_the_record_as_it_is_now(tmp_path: Path) -> None:
    # A trial's `habitat status` said "38 tests" from the warm-up while later verifies'
    # notes said 40 were on record: the line is the store's now, not the warm-up's snapshot.
    workspace = Workspace(root=tmp_path, state_dir=tmp_path / "state")
    _recorded(workspace, ["tests/t.py::a"], "2026-12-07T08:43:20+00:00")
    items = {
        "test_deps": {"state": "warm", "detail": "1 tests, recorded 2026-12-07T08:43:20+00:00"}
    }
    started = os.stat(deps_store_dir(workspace.state_dir) / "deps.json").st_mtime
    data = {"started_at": started, "finished_at": started + 1, "items": items}
    write_private(workspace.state_dir / "warm.json", json.dumps(data))
    assert warm_lines(workspace) == [
        "warm: test deps: warm — 1 tests, recorded 2026-12-07T08:43:20+00:00"
    ]
    tests = ["tests/t.py::a", "tests/t.py::b", "tests/u.py::c"]
    _recorded(workspace, tests, "2026-12-07T08:51:02+00:00")
    store = deps_store_dir(workspace.state_dir) / "deps.json"
    # Written after the warm-up began, whatever the file system's time grain.
    os.utime(store, (started + 5, started + 5))
    assert warm_lines(workspace) == [
        "warm: test deps: warm — 3 tests, recorded 2026-12-07T08:51:02+00:00"
    ]


async def test_a_checker_the_warm_up_could_not_start_and_a_verify_started_since_says_both(
    tmp_path: Path,
) -> None:
    # destr 2.0.5 (a new user's trial): the warm-up's "eslint did not start (initialize: no
    # answer within 60 s)" stood in `habitat status` beside the eslint linter a verify had
    # started since, as if it were still down.
    workspace = Workspace.for_project(_project(tmp_path))
    said = "the warm tsc (pid 7), eslint did not start (initialize: no answer within 60 s)"
    items = {name: {"state": "skipped", "detail": "x"} for name in STEPS}
    items["type_daemon"] = {"state": "warm", "detail": said}
    owner = await _dead_owner()
    data = {"started_at": 1.0, "finished_at": 2.0, "owner": owner, "items": items}
    workspace.state_dir.mkdir(parents=True, exist_ok=True)
    write_private(workspace.state_dir / "warm.json", json.dumps(data))
    assert f"warm: type daemon: warm — {said}" in warm_lines(workspace)
    async with await anyio.open_process(["sleep", "300"]) as linter:
        status = {
            "pid": linter.pid,
            "create_time": process_create_time(linter.pid),
            "tool": "eslint",
            "kind": "linter",
            "owner": os.getpid(),
        }
        write_private(workspace.state_dir / "checker-warm" / "eslint.json", json.dumps(status))
        try:
            line = next(ln for ln in warm_lines(workspace) if ln.startswith("warm: type daemon"))
            assert line == (
                f"warm: type daemon: warm — {said}; eslint started since (pid {linter.pid})"
            ), line
            # Recorded from its spawn: one still waiting for `initialize` says so.
            status["starting"] = True
            write_private(workspace.state_dir / "checker-warm" / "eslint.json", json.dumps(status))
            line = next(ln for ln in warm_lines(workspace) if ln.startswith("warm: type daemon"))
            assert line.endswith(f"; eslint starting since (pid {linter.pid})"), line
        finally:
            linter.kill()
