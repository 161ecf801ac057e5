"""A one-shot verify's warm pytest begun before the ladder is imported
(verify/rungs/warm_pytest.py `begin_early`): the climb takes it over only for the same
interpreter, root and environment, and what no climb took over is stopped."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import psutil
import pytest

from agent_habitat.proc import ProcessRecord, is_alive
from agent_habitat.verify import stop_type_daemon
from agent_habitat.verify.command import child_env
from agent_habitat.verify.environments import ProjectEnv
from agent_habitat.verify.rungs import warm_pytest
from agent_habitat.verify.rungs.warm_pytest import WarmPytest, begin_early, drop_early, own_folder
from agent_habitat.workspace import Workspace
from git_tree import commit_tree

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[Path]:
    root = commit_tree(
        tmp_path / "shop",
        {
            "shop/__init__.py": "",
            "shop/core.py": "def double(x: int) -> int:\n    return x * 2\n",
            "tests/test_core.py": "from shop.core import double\n\n\n"
            "def test_double() -> None:\n    assert double(2) == 4\n",
            ".gitignore": "__pycache__/\n.pytest_cache/\n",
            "pyproject.toml": '[project]\nname = "shop"\nversion = "0"\n\n'
            f"[tool.habitat.ladder]\npython = {sys.executable!r}\n",
        },
    )
    yield root
    anyio.run(stop_type_daemon, root)


def _early() -> ProcessRecord:
    (spawned,) = warm_pytest._early.values()
    assert spawned.python == sys.executable
    return spawned.record


async def test_a_warm_pytest_begun_early_is_the_one_the_climb_starts(shop: Path) -> None:
    workspace = Workspace.for_project(shop).ensure()
    assert begin_early(workspace, Path(sys.executable), shop)
    early = _early()
    env = ProjectEnv(python=Path(sys.executable))
    warm = WarmPytest(workspace, own_folder())
    try:
        assert await warm.start(env, shop, child_env(None, env.bin_dir)) is None
        started = warm.record()
        assert started is not None
        assert started.pid == early.pid
        assert warm_pytest._early == {}
    finally:
        await warm.stop_now()


async def test_one_begun_for_another_environment_is_stopped_and_not_used(shop: Path) -> None:
    workspace = Workspace.for_project(shop).ensure()
    assert begin_early(workspace, Path(sys.executable), shop)
    early = _early()
    env = ProjectEnv(python=Path(sys.executable))
    warm = WarmPytest(workspace, own_folder())
    try:
        other = child_env({"HABITAT_TEST_SOMETHING": "set since"}, env.bin_dir)
        assert await warm.start(env, shop, other) is None
        started = warm.record()
        assert started is not None
        assert started.pid != early.pid
        assert not is_alive(early)
    finally:
        await warm.stop_now()


async def test_what_no_climb_took_over_is_stopped(shop: Path) -> None:
    workspace = Workspace.for_project(shop).ensure()
    assert begin_early(workspace, Path(sys.executable), shop)
    early = _early()
    await drop_early()
    assert not is_alive(early)
    assert warm_pytest._early == {}


def test_a_one_shot_verify_with_nothing_to_test_leaves_no_warm_pytest_running(
    shop: Path,
) -> None:
    # The tree as HEAD has it: the climb wants no test process, so the one begun first is
    # stopped before the process exits.
    argv = [sys.executable, "-m", "agent_habitat", "verify", "--no-host", "--json"]
    done = subprocess.run(
        [*argv, "--project", str(shop)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 4, done.stderr
    assert json.loads(done.stdout)["state"] == "nothing_to_verify"
    left = [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if "habitat_pytest_zygote" in str(p.info["cmdline"])
        and str(shop) in (p.info["cmdline"] or [])
    ]
    assert left == []


async def test_a_climb_stops_only_its_own_workspaces_early_pytest(
    shop: Path, tmp_path: Path
) -> None:
    other = commit_tree(tmp_path / "other", {"pyproject.toml": '[project]\nname = "o"\n'})
    mine, theirs = (Workspace.for_project(root).ensure() for root in (shop, other))
    assert begin_early(mine, Path(sys.executable), shop)
    assert begin_early(theirs, Path(sys.executable), other)
    kept = warm_pytest._early[WarmPytest(theirs, own_folder()).dir].record
    dropped = warm_pytest._early[WarmPytest(mine, own_folder()).dir].record
    try:
        await drop_early(mine)
        assert not is_alive(dropped)
        assert is_alive(kept)
    finally:
        await drop_early()
    assert not is_alive(kept)
