"""The warm-up's step for a Node project (warmup.py): the warm tsc of each checked workspace
(toolchains/node/tsc_warm.py), the warm eslint of each linted folder (eslint_warm.py) and
the warm jest of each workspace jest tests (jest_warm.py), started side by side."""

from __future__ import annotations

import anyio
import anyio.to_thread

from ...errors import HabitatError
from ...workspace import Workspace
from ..rungs import warm_checker
from ..rungs.context import RungContext
from ..toolchains.node.detect import load_project
from ..toolchains.node.eslint_warm import linted
from ..toolchains.node.eslint_warm import slot as eslint_slot
from ..toolchains.node.eslint_warm import warm_up as eslint_up
from ..toolchains.node.jest_warm import slot as jest_slot
from ..toolchains.node.jest_warm import warm_up as jest_up
from ..toolchains.node.jest_warm import warmed
from ..toolchains.node.tsc_warm import checked, warm_up
from ..toolchains.node.tsc_warm import slot as tsc_slot
from .warm_status import WarmItem

__all__ = ["warm_node"]


async def warm_node(ctx: RungContext, workspace: Workspace, climbable: anyio.Event) -> WarmItem:
    """Announce each server's start, let the climbs go (`climbable`), then start them all."""
    project = await anyio.to_thread.run_sync(load_project, ctx.root)
    # Announced, then the climbs go: a verify asked meanwhile runs eslint cold beside its
    # start and takes the first answer, and waits for tsc's and jest's starts, made the
    # user's (toolchains/node/race.py), so it never waits for a background start. The
    # three kinds start side by side at background priority: a verify that waits on one
    # must not wait behind another's start.
    slots = [eslint_slot(f) for f in linted(project)]
    slots += [tsc_slot(ws) for ws, _ in checked(project)]
    slots += [jest_slot(ws) for ws, _ in await anyio.to_thread.run_sync(warmed, project)]
    for slot in slots:
        warm_checker.announce(workspace, slot)
    climbable.set()
    linters: list[str] = []
    runners: list[str] = []
    tsc: list[tuple[str, str]] = []

    async def lint() -> None:
        try:
            linters.extend(await eslint_up(ctx, project))
        except (OSError, HabitatError, ValueError) as exc:  # as the step's own catch
            linters.append(f"eslint did not start ({str(exc)[:200]})")

    async def test() -> None:
        try:
            runners.extend(await jest_up(ctx, project))
        except (OSError, HabitatError, ValueError) as exc:
            runners.append(f"jest did not start ({str(exc)[:200]})")

    async def check() -> None:
        try:
            tsc.append(await warm_up(ctx))
        except (OSError, HabitatError, ValueError) as exc:
            tsc.append(("failed", str(exc)[:300]))

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lint)
            tg.start_soon(check)
            tg.start_soon(test)
    finally:
        for slot in slots:
            warm_checker.settle(workspace, slot)
    state, detail = tsc[0]
    if (linters or runners) and state == "skipped":
        state, detail = "warm", ""
    return WarmItem(state, ", ".join(d for d in (detail, *linters, *runners) if d))
