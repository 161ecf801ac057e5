"""Every `project_open` gets an answer, however many arrive at once.

Issue 23 ("Under load"): in a fuzz run with concurrent callers, 30 `project_open` calls got
no answer at all. A switch of the verify runner waited for "ready", and a second switch
that came while the first was under way replaced the event the first waited on: the
first caller waited for ever. Here the calls come together, from a real MCP client.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from mcp_tools.helpers import make_project, primary_client, text
from timing import SLOWDOWN

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180), pytest.mark.finding("under-load")]

CALLS = 12


async def test_concurrent_project_opens_each_get_an_answer(tmp_path: Path) -> None:
    projects = [make_project(tmp_path / f"p{i}") for i in range(3)]
    answered: list[str] = []
    async with primary_client(projects[0]) as (primary, client):

        async def open_one(i: int) -> None:
            result = await client.call_tool("project_open", {"path": str(projects[i % 3])})
            assert not result.is_error, text(result)
            answered.append(text(result))

        # A bound, not a speed claim: without the fix the late callers never return.
        with anyio.fail_after(60 * SLOWDOWN):
            async with anyio.create_task_group() as tg:
                for i in range(CALLS):
                    tg.start_soon(open_one, i)
        # And the habitat still serves: a verify status reads the project that won.
        status = await client.call_tool("verify_status", {})
        root = primary.habitat.project.root
    assert len(answered) == CALLS
    assert root in {p.resolve() for p in projects}
    assert not status.is_error, text(status)
