"""One rung of the ladder on a project, for the tests of that rung.

Imported as `ladder_runs`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, RungName, RungResult, run_ladder
from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.layout import Layout
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.snapshot import take_snapshot
from agent_habitat.workspace import Workspace

__all__ = ["climb_one", "tree_ctx"]


async def climb_one(root: Path, rung: RungName) -> RungResult:
    """Climb `rung` alone on `root` as it is now; its result."""
    request = LadderRequest(rungs=[rung])
    (only,) = (await run_ladder(root, request, bus=InMemoryEventBus("t"))).rungs
    return only


def tree_ctx(root: Path, ladder_id: str, **extra: Any) -> RungContext:
    """A climb's context on the tree of `root` as it is, for a project that is not Python
    (a Rust crate, a Node package): `extra` sets the other fields (`rungs`, `hooks`)."""
    snapshot = take_snapshot(root)
    return RungContext(
        root=root,
        workspace=Workspace.for_project(root),
        config=LadderConfig(),
        policy="standard",
        ladder_id=ladder_id,
        snapshot=snapshot,
        touched=snapshot.touched,
        layout=Layout(root=root, packages={}, test_roots=[], is_python=False),
        env=None,
        **extra,
    )
