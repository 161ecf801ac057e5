"""What the tests of the Node warm checkers share (tests/verify/test_node_tsc_warm.py,
test_node_tsc_compile.py, test_node_tsc_references.py, test_node_eslint_warm.py,
test_node_race.py): a tiny committed project with the cached tools linked in as its
`node_modules`, a rung's context as a server's climb (it has hooks) or a one-shot's, and the
warm-up's test: it starts the checker, at normal priority once it answered, listed, stopped
with its owner.

Imported as `node_warm`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import anyio
import pytest

from agent_habitat.habitat import Habitat
from agent_habitat.proc import priority
from agent_habitat.trust import ProjectTrust
from agent_habitat.verify.hooks import LadderHooks
from agent_habitat.verify.rungs import warm_checker
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.workspace import Workspace
from git_tree import commit_tree
from ladder_runs import tree_ctx
from node_tools import node_modules

__all__ = ["rung_ctx", "tiny_project", "warm_up_starts"]

_IDS = itertools.count(1)


def tiny_project(root: Path, files: dict[str, str]) -> Path:
    """`files` committed at `root`, the test tools linked in as its `node_modules`."""
    commit_tree(root, files)
    (root / "node_modules").symlink_to(node_modules(), target_is_directory=True)
    return root


def rung_ctx(root: Path, *, server: bool) -> RungContext:
    """A climb's context on the tree as it is: a server's (host, MCP: it has hooks, and
    keeps warm checkers) or a one-shot's."""
    # a server's climb (host, MCP) has hooks
    return tree_ctx(root, f"n{next(_IDS)}", hooks=LadderHooks() if server else None)


async def warm_up_starts(
    root: Path, monkeypatch: pytest.MonkeyPatch, tool: str, started: str
) -> None:
    """The warm-up of the trusted project at `root` starts `tool`'s warm checker (its step
    says `started` and the pid), which answers at the priority it had once started (it
    started at background priority), is listed, and stops with the habitat."""
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "true")
    ProjectTrust().grant_sync(root, "verb")  # the warm-up runs only a trusted project's code
    workspace = Workspace.for_project(root)
    async with Habitat.open(workspace, project=root) as habitat:
        warm = habitat.verifier.warmup
        assert warm is not None
        with anyio.fail_after(300):
            await warm.wait()
        item = warm.items["type_daemon"]
        assert item.state == "warm", warm.items
        assert started in item.detail
        [listed] = warm_checker.live(workspace)
        assert listed["tool"] == tool
        assert str(listed["pid"]) in item.detail
        group = priority._autogroup(f"/proc/{listed['pid']}/autogroup")
        if group is not None:  # where the kernel has autogroups: put back once it answered
            assert group[1] == 0, group
    assert warm_checker.live(workspace) == []
