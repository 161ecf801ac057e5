"""The warm-up's dmypy start gives way to a verify: the daemon it forks into a session of its
own is stopped while a verify runs and goes on once none does, so the start still ends."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import psutil
import pytest

from agent_habitat.habitat import Habitat
from agent_habitat.testing import eventually
from agent_habitat.trust import ProjectTrust
from agent_habitat.verify import LadderRequest, stop_type_daemon
from agent_habitat.workspace import Workspace
from git_tree import git as _git
from git_tree import write as _write

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

# A mypy plugin that holds a check where the test can look at it: the dmypy daemon's
# ("held-daemon", until "release-daemon") and a plain mypy's ("held-plain", until
# "release-plain"). Bounded: each lets go by itself after five minutes.
HOLD = """import os
import sys
import time
from pathlib import Path

from mypy.plugin import Plugin

_HERE = Path(__file__).parent


def plugin(version: str) -> type[Plugin]:
    who = "daemon" if "dmypy" in sys.argv[0] else "plain"
    (_HERE / f"held-{who}.tmp").write_text(str(os.getpid()), encoding="utf-8")
    (_HERE / f"held-{who}.tmp").rename(_HERE / f"held-{who}")
    deadline = time.monotonic() + 300
    while not (_HERE / f"release-{who}").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return Plugin
"""
CORE = "def double(x: int) -> int:\n    return x * 2\n"


def _project(root: Path, plugin: Path) -> Path:
    _write(root, "shop/__init__.py", "")
    _write(root, "shop/core.py", CORE)
    _write(root, "tests/test_core.py", "from shop.core import double\n\n\n"
           "def test_double() -> None:\n    assert double(2) == 4\n")  # fmt: skip
    _write(root, ".gitignore", ".mypy_cache/\n.ruff_cache/\n__pycache__/\n")
    _write(
        root,
        "pyproject.toml",
        f'[project]\nname = "shop"\nversion = "0"\n\n'
        f"[tool.habitat.ladder]\npython = {sys.executable!r}\n\n"
        f"[tool.mypy]\nplugins = [{str(plugin)!r}]\n",
    )
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "shop")
    return root


def _stopped(pid: int) -> bool:
    return bool(psutil.Process(pid).status() == psutil.STATUS_STOPPED)


async def test_the_dmypy_start_is_stopped_while_a_verify_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tabulate 0.9 through a host opened just before: the second edit's verdict took 34.1 s
    # against 19.1 s, its tests sharing the cores with the warm-up's dmypy start (a whole
    # check, in a session of its own, at normal priority).
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "true")
    hold = tmp_path / "hold"
    hold.mkdir()
    (hold / "hold_plugin.py").write_text(HOLD, encoding="utf-8")
    root = _project(tmp_path / "shop", hold / "hold_plugin.py")
    ProjectTrust().grant_sync(root, "verb")
    try:
        async with Habitat.open(Workspace.for_project(root), project=root) as habitat:
            warm, runner = habitat.verifier.warmup, habitat.verify
            assert warm is not None
            assert runner is not None
            await eventually(lambda: (hold / "held-daemon").exists(), within=300)
            daemon = int((hold / "held-daemon").read_text(encoding="utf-8"))
            assert not _stopped(daemon)
            _write(root, "shop/core.py", CORE.replace("x * 2", "x + x"))
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: runner.request(LadderRequest(policy="standard"), wait=True))
                # The verify's compile.project checks with plain mypy, held here: while it
                # runs, the daemon's check does not.
                await eventually(lambda: (hold / "held-plain").exists(), within=300)
                await eventually(lambda: _stopped(daemon), within=30)
                assert warm.running("type_daemon")
                (hold / "release-plain").touch()
            # The verdict is in: the start goes on, and ends.
            await eventually(lambda: not _stopped(daemon), within=30)
            (hold / "release-daemon").touch()
            with anyio.fail_after(300):
                await warm.wait()
            item = warm.items["type_daemon"]
            assert item.state == "warm", item
            assert item.pid == daemon
            assert "its start paused 1 time(s) so a verify could run first" in item.detail, (
                item.detail
            )
    finally:
        (hold / "release-daemon").touch()
        (hold / "release-plain").touch()
        await stop_type_daemon(root)
