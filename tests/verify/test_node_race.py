"""A check while the warm-up still starts the warm checker (toolchains/node/race.py): the
tool's cold run goes at once beside the start, and the first answer is taken; the other is
cancelled. Fakes at the two seams (the warm check, the cold run), real announcements."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent_habitat.verify.rungs import warm_checker
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.toolchains.node.race import warm_or_cold
from git_tree import commit_tree
from node_warm import rung_ctx

pytestmark = pytest.mark.anyio
_SLOT = "node:"


def _ctx(root: Path, *, server: bool = True) -> RungContext:
    commit_tree(root, {"package.json": "{}"})
    return rung_ctx(root, server=server)


async def test_the_cold_run_answers_while_the_start_is_under_way(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    warm_checker.announce(ctx.workspace, _SLOT)
    asked: list[bool] = []

    async def warm(notes: list[str], may_start: bool) -> str | None:
        asked.append(may_start)
        return "warm"

    async def cold() -> str:
        return "cold"

    notes: list[str] = []
    try:
        with anyio.fail_after(10):  # the start never ends here: the cold run must not wait
            answer = await warm_or_cold(ctx, _SLOT, "tsc", warm, cold, notes)
    finally:
        warm_checker.settle(ctx.workspace, _SLOT)
    assert answer == ("cold", False)
    assert asked == []  # the warm side was still waiting for the start
    assert notes == [
        "tsc: the warm-up was still starting its warm checker (background priority); tsc ran "
        "cold beside it, and the cold run answered first"
    ]


async def test_the_warm_checker_answers_once_started_and_the_cold_run_is_cancelled(
    tmp_path: Path,
) -> None:
    ctx = _ctx(tmp_path)
    warm_checker.announce(ctx.workspace, _SLOT)
    cancelled = anyio.Event()
    asked: list[bool] = []

    async def warm(notes: list[str], may_start: bool) -> str | None:
        asked.append(may_start)
        notes.append("tsc: the warm checker checked the change")
        return "warm"

    async def cold() -> str:
        warm_checker.settle(ctx.workspace, _SLOT)  # the start ends while the cold one runs
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "cold"

    notes: list[str] = []
    with anyio.fail_after(10):
        answer = await warm_or_cold(ctx, _SLOT, "tsc", warm, cold, notes)
    assert answer == ("warm", True)
    assert cancelled.is_set()
    assert asked == [False]  # never a start of its own: the warm-up's ended
    assert notes[0] == "tsc: the warm checker checked the change"
    assert notes[1].endswith("and its warm start answered first")


async def test_a_start_that_failed_leaves_the_cold_answer(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    warm_checker.announce(ctx.workspace, _SLOT)
    went = anyio.Event()

    async def warm(notes: list[str], may_start: bool) -> str | None:
        went.set()
        return None  # no server after the start: nothing warm to ask

    async def cold() -> str:
        warm_checker.settle(ctx.workspace, _SLOT)
        await went.wait()
        return "cold"

    with anyio.fail_after(10):
        answer = await warm_or_cold(ctx, _SLOT, "tsc", warm, cold, [])
    assert answer == ("cold", False)


@pytest.mark.parametrize("server", [True, False])
async def test_with_no_start_announced_the_warm_checker_goes_first(
    tmp_path: Path, server: bool
) -> None:
    # No warm-up under way (a later verify; a one-shot has no warm-up at all): as before.
    ctx = _ctx(tmp_path, server=server)
    order: list[str] = []

    async def warm(notes: list[str], may_start: bool) -> str | None:
        order.append(f"warm {may_start}")
        return None

    async def cold() -> str:
        order.append("cold")
        return "cold"

    assert await warm_or_cold(ctx, _SLOT, "tsc", warm, cold, []) == ("cold", False)
    assert order == ["warm True", "cold"]
