"""A host imports what serving asks for: its start loads neither the ladder nor the warm-up's
steps, the MCP SDK, nor TCP's protocol when it listens on its socket alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from git_tree import commit_tree

_NOT_AT_START = (
    "agent_habitat.verify.ladder",  # the first climb loads it (runner.py)
    "agent_habitat.verify.rungs.context",  # the warm-up's steps and the recording
    "agent_habitat.verify.toolchains.rust.warm",
    "agent_habitat.verify.rungs.warm_checker",  # the first /api/status
    "agent_habitat.host.tcp_limits",  # a TCP listener
    "h11",
    "grimp",  # the import graph: a climb or the warm-up's step
    "doctest",  # a project's doctest files
    "mcp",  # the first /mcp request, or a quiet moment after the start (server.py)
)


def test_a_started_host_has_not_loaded_what_no_request_asked_for(tmp_path: Path) -> None:
    files = {"pyproject.toml": '[project]\nname = "calc"\n', "calc/__init__.py": "X = 1\n"}
    root = commit_tree(tmp_path / "p", files)
    # The host's own way in, up to listening: the habitat with its verify runner, the app.
    code = f"""
import sys
from pathlib import Path

import anyio

from agent_habitat.host.app import build_app, build_mcp
import agent_habitat.host.server


async def main() -> None:
    async with build_mcp(Path({str(root)!r})) as hosted:
        assert hosted.habitat.verify is not None  # the runner serves
        build_app(hosted, token=None, idle_seconds=0)


anyio.run(main)
print("\\n".join(sys.modules))
"""
    # What the product imports, not what a measuring suite adds (coverage's own modules).
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    env.update(HABITAT_HOME=str(tmp_path / "home"), HABITAT_LADDER_WARMUP="false")
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert "agent_habitat.verify.runner.runner" in loaded  # the check sees the runner's modules
    assert not {name for name in _NOT_AT_START if name in loaded}


_CLIMB_WHEN_QUIET = """
import pathlib
import sys

import anyio

from agent_habitat.host import server
from agent_habitat.host.app import build_app, build_mcp


async def main(root: str) -> None:
    async with build_mcp(pathlib.Path(root)) as hosted:
        app = build_app(hosted, token=None, idle_seconds=0)
        async with hosted.mcp.serving():
            print("start", "agent_habitat.verify.ladder" in sys.modules)
            with anyio.fail_after(120):
                await server._prepare_when_quiet(app, hosted, pathlib.Path(root))
            names = ("agent_habitat.verify.ladder", "agent_habitat.verify.toolchains.rust.runners")
            from agent_habitat.verify.models import RungResult

            built = RungResult.__pydantic_complete__  # the report's models: built on first use
            print("quiet", *(name in sys.modules for name in names), built)


anyio.run(main, sys.argv[1])
"""


def test_a_quiet_host_imports_the_climb_of_the_projects_toolchains(tmp_path: Path) -> None:
    # A first verify then starts its tools at once: the ladder and the rung table of each
    # toolchain the project has (Cargo.toml: Rust's), never one it has not.
    rust = commit_tree(
        tmp_path / "r",
        {"Cargo.toml": '[package]\nname = "r"\nversion = "0.1.0"\n', "src/lib.rs": ""},
    )
    python = commit_tree(tmp_path / "p", {"pyproject.toml": '[project]\nname = "p"\n'})
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    env.update(HABITAT_HOME=str(tmp_path / "home"), HABITAT_LADDER_WARMUP="false")
    said = {}
    for root in (rust, python):
        done = subprocess.run(
            [sys.executable, "-c", _CLIMB_WHEN_QUIET, str(root)],
            capture_output=True,
            text=True,
            env=env,
            timeout=180,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        said[root.name] = done.stdout.split("\n")[:2]
    assert said == {
        "r": ["start False", "quiet True True True"],
        "p": ["start False", "quiet True False True"],
    }
