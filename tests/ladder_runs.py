"""One rung of the ladder on a project, for the tests of that rung.

Imported as `ladder_runs`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

from pathlib import Path

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, RungName, RungResult, run_ladder

__all__ = ["climb_one"]


async def climb_one(root: Path, rung: RungName) -> RungResult:
    """Climb `rung` alone on `root` as it is now; its result."""
    request = LadderRequest(rungs=[rung])
    (only,) = (await run_ladder(root, request, bus=InMemoryEventBus("t"))).rungs
    return only
