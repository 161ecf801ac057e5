"""The ladder warms when a project opens, and the first verify after it finds it warm:
the type daemon already running, HEAD's lint findings already cached, the import graph not
built again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from agent_habitat.habitat import Habitat
from agent_habitat.proc import is_alive
from agent_habitat.trust import ProjectTrust
from agent_habitat.verify import LadderRequest, stop_type_daemon
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.rungs.warm_pytest import WarmPytest
from agent_habitat.verify.runner.warmup import WarmItem, WarmUp, warm_lines
from agent_habitat.workspace import Workspace
from git_tree import IGNORED, commit_tree, ladder_pyproject
from git_tree import write as _write

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CORE = """import os


def double(x: int) -> int:
    return x * 2
"""
TEST = """from shop.core import double


def test_double() -> None:
    assert double(2) == 4
"""


def _shop(root: Path) -> Path:
    _write(root, "shop/__init__.py", "")
    _write(root, "shop/core.py", CORE)  # `import os` unused: a finding at HEAD (F401)
    _write(root, "tests/test_core.py", TEST)
    return commit_tree(
        root, {".gitignore": IGNORED, "pyproject.toml": ladder_pyproject("shop")}, "shop"
    )


@pytest.fixture
async def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Path]:
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "true")
    root = _shop(tmp_path / "shop")
    ProjectTrust().grant_sync(root, "verb")  # the warm-up runs only a trusted project's code
    yield root
    await stop_type_daemon(root)


async def test_first_verify_after_open_uses_what_the_warm_up_built(shop: Path) -> None:
    workspace = Workspace.for_project(shop)
    async with Habitat.open(workspace, project=shop) as habitat:
        warm = habitat.verifier.warmup
        runner = habitat.verify
        assert warm is not None
        assert runner is not None
        with anyio.fail_after(120):
            await warm.wait()
        states = {name: item.state for name, item in warm.items.items()}
        assert states == {
            "import_graph": "warm",
            "test_deps": "skipped",
            "lint_baseline": "warm",
            "type_daemon": "warm",
            "pytest": "warm",
        }, warm.items
        assert runner.memo.builds == 1
        _write(shop, "shop/core.py", CORE.replace("x * 2", "x + x"))
        with anyio.fail_after(180):
            ticket = await runner.request(LadderRequest(policy="standard"), wait=True)
        assert ticket.result is not None
        assert ticket.result.result is not None
        rungs = {r.rung: r for r in ticket.result.result.rungs}
        diagnose, compiled = rungs["diagnose.files"], rungs["compile.project"]
        assert diagnose.state == "green", diagnose
        assert diagnose.preexisting_findings == 1
        assert diagnose.baseline is not None
        assert diagnose.baseline.endswith("(cached)")
        assert compiled.state == "green", compiled
        assert not any("daemon started" in note for note in compiled.notes), compiled.notes
        assert runner.memo.builds == 1, "the climb rebuilt the import graph"
        assert rungs["test.scoped"].state == "green"
        assert any("forked from the warm pytest" in n for n in rungs["test.scoped"].notes)
        zygote = WarmPytest(workspace).record()
        assert zygote is not None
        lines = warm_lines(workspace)
        assert any(line.startswith("warm: type daemon: warm — dmypy daemon (pid") for line in lines)
        assert any(line.startswith("warm: lint baseline: warm") for line in lines)
    # The daemon belongs to the habitat that warmed it: it stops when that habitat closes.
    lines = warm_lines(workspace)
    assert "warm: type daemon: cold — the dmypy daemon has exited since" in lines
    assert "warm: pytest: cold — the warm pytest has exited since" in lines
    assert not is_alive(zygote)


async def test_warm_up_turned_off_warms_nothing(
    shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "false")
    async with Habitat.open(Workspace.for_project(shop), project=shop) as habitat:
        warm = habitat.verifier.warmup
        assert warm is not None
        with anyio.fail_after(30):
            await warm.wait()
        assert {item.state for item in warm.items.values()} == {"skipped"}


async def test_a_rung_waits_only_for_the_warm_step_it_uses(
    shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tabulate 0.9, a fresh host: the first verify waited 13-16 s for the whole warm-up
    # (graph, lint baseline, dmypy, the warm pytest) before its first rung. The one seam:
    # the type daemon's start is held until released, then starts the real daemon.
    started, release = anyio.Event(), anyio.Event()
    real = WarmUp._daemon

    async def held_daemon(self: WarmUp, ctx: RungContext) -> WarmItem:
        started.set()
        await release.wait()
        return await real(self, ctx)

    monkeypatch.setattr(WarmUp, "_daemon", held_daemon)
    workspace = Workspace.for_project(shop)
    async with Habitat.open(workspace, project=shop) as habitat:
        warm, runner = habitat.verifier.warmup, habitat.verify
        assert warm is not None
        assert runner is not None
        with anyio.fail_after(60):
            await started.wait()
        _write(shop, "shop/core.py", CORE.replace("x * 2", "x + x"))
        # The lint and the tests climb while the type daemon's start is held.
        with anyio.fail_after(120):
            ticket = await runner.request(
                LadderRequest(rungs=["diagnose.files", "test.scoped"]), wait=True
            )
        assert not release.is_set()
        assert "type_daemon" not in warm.items, "the type daemon's start was not held"
        assert ticket.result is not None
        assert ticket.result.result is not None
        states = {r.rung: r.state for r in ticket.result.result.rungs}
        assert states == {"diagnose.files": "green", "test.scoped": "green"}
        # compile.project does not wait for that start either: it checks with plain mypy
        # (as a one-shot verify does), never a second daemon start beside the warm-up's.
        with anyio.fail_after(180):
            ticket = await runner.request(LadderRequest(rungs=["compile.project"]), wait=True)
        assert not release.is_set()
        assert ticket.result is not None
        assert ticket.result.result is not None
        (compiled,) = ticket.result.result.rungs
        assert (compiled.state, compiled.tool) == ("green", "mypy"), compiled
        assert any("still starting the dmypy daemon" in n for n in compiled.notes), compiled
        # Once the start ended, the rung asks the daemon the warm-up started.
        release.set()
        with anyio.fail_after(180):
            await warm.wait()
        assert warm.items["type_daemon"].state == "warm", warm.items
        _write(shop, "shop/core.py", CORE.replace("x * 2", "2 * x"))
        with anyio.fail_after(180):
            ticket = await runner.request(LadderRequest(rungs=["compile.project"]), wait=True)
        assert ticket.result is not None
        assert ticket.result.result is not None
        (compiled,) = ticket.result.result.rungs
        assert (compiled.state, compiled.tool) == ("green", "dmypy"), compiled
        assert not any("daemon started" in note for note in compiled.notes), compiled.notes


async def test_the_verify_that_trusts_the_project_climbs_before_the_warm_up_begins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The new user's flow: the first verify is what trusts the project, so the warm-up
    # begins with it. On 2 cores its steps took the CPU that verify needed (tabulate 0.9:
    # 30.7 s against 28.2 s cold); they begin once verify is quiet.
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "true")
    root = _shop(tmp_path / "shop")
    order: list[str] = []
    real = WarmUp._daemon

    async def noted_daemon(self: WarmUp, ctx: RungContext) -> WarmItem:
        order.append("type daemon")
        return await real(self, ctx)

    monkeypatch.setattr(WarmUp, "_daemon", noted_daemon)
    try:
        async with Habitat.open(Workspace.for_project(root), project=root) as habitat:
            warm, runner = habitat.verifier.warmup, habitat.verify
            assert warm is not None
            assert runner is not None
            # Heard as it is published: before anything that waits for it can go on.
            habitat.bus.subscribe(
                lambda e: order.append("verdict") if e.kind == "verify.epoch.finished" else None
            )
            _write(root, "shop/core.py", CORE.replace("x * 2", "x + x"))
            await habitat.verifier.trust.grant(root, "verify")  # as the verify verb does
            with anyio.fail_after(180):
                ticket = await runner.request(LadderRequest(policy="standard"), wait=True)
            assert ticket.result is not None
            assert ticket.result.state == "green", ticket.result
            with anyio.fail_after(180):
                await warm.wait()
            assert order == ["verdict", "type daemon"]
            assert warm.items["type_daemon"].state == "warm", warm.items
    finally:
        await stop_type_daemon(root)
