"""Client regexes run with a time budget, and scans of a spool run off the event loop."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from agent_habitat.shell import output
from mcp_tools.helpers import make_project, primary_client, text

pytestmark = pytest.mark.anyio

LINE = "a" * 40 + "!"
# A bound for a hang, not a speed claim: where the searching thread waits for a core, a
# hopeless pattern's search may take its budget doubled at each retry in wall, twice a scan
# (the lines joined, then each line), before it is stopped and named (output.ClientPattern).
_HOPELESS_WALL = 2 * output.SEARCH_BUDGET_SECONDS * (2 ** (output._RETRIES + 1) - 1)
_CALLS = 20  # the calls around it, at load 30 on the 2-core machine


async def test_a_nested_quantifier_is_answered_at_once(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        await client.call_tool("shell_run", {"command": f"echo {LINE}; echo ok"})
        with anyio.fail_after(10):
            result = await client.call_tool("shell_last", {"grep": "(a+)+$"})
    assert not result.is_error, text(result)


async def test_a_catastrophic_grep_is_a_tool_error_naming_grep(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        await client.call_tool("shell_run", {"command": f"echo {LINE}"})
        with anyio.fail_after(_HOPELESS_WALL + _CALLS):
            async with anyio.create_task_group() as tg:
                results = []

                async def grep() -> None:
                    results.append(await client.call_tool("shell_last", {"grep": "(a|aa)+$"}))

                tg.start_soon(grep)
                await client.call_tool("shell_scene", {})  # answered while the search runs
    message = text(results[0])
    assert results[0].is_error
    assert "argument `grep`" in message
    assert "took over" in message


async def test_a_catastrophic_until_is_a_tool_error_naming_until(tmp_path: Path) -> None:
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        await client.call_tool(
            "shell_run", {"command": f"echo {LINE}; sleep 30", "background": True}
        )
        with anyio.fail_after(15 + _HOPELESS_WALL + _CALLS):
            result = await client.call_tool(
                "shell_wait", {"until": "(a|aa)+$", "timeout_seconds": 15}
            )
        await client.call_tool("shell_kill", {"tab": "main"})
    assert result.is_error
    assert "argument `until`" in text(result)


async def test_another_call_is_answered_while_a_grep_scans_the_spool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered = threading.Event()
    gate = threading.Event()
    released_in_time: list[bool] = []
    real_clean = output.clean_text

    def slow_clean(raw: bytes, secrets: tuple[str, ...] | None = None) -> str:
        # The first line of the scan waits until the test saw its ping answered; on the
        # event loop it would wait in vain (the loop could not answer), and time out.
        if not entered.is_set():
            entered.set()
            released_in_time.append(gate.wait(10))
        return real_clean(raw, secrets)

    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        await client.call_tool("shell_run", {"command": "seq 1 1000"})
        monkeypatch.setattr(output, "clean_text", slow_clean)
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "shell_last", {"grep": "^99"})
            await anyio.to_thread.run_sync(entered.wait, 10)
            with anyio.fail_after(5):
                await client.call_tool("shell_scene", {})
            gate.set()
    assert released_in_time == [True]
