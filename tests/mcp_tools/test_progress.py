"""Progress: only with a token, monotonic, at most 4/s, never after the result."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent_habitat.mcp_tools.progress import MIN_INTERVAL_SECONDS, ProgressThrottle
from shell_waits import await_file

from .helpers import Inbox, make_project, primary_client

pytestmark = pytest.mark.anyio


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[float, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.sent.append((progress, message))


async def test_throttle_without_a_token_sends_nothing() -> None:
    recorder = Recorder()
    throttle = ProgressThrottle(recorder, enabled=False)
    await throttle(1.0, "line")
    assert recorder.sent == []


async def test_throttle_sends_at_most_one_report_per_interval() -> None:
    recorder, clock = Recorder(), FakeClock()
    throttle = ProgressThrottle(recorder, enabled=True, clock=clock)
    for step in range(40):  # 40 reports over 1 s of fake time
        clock.now = 100.0 + step * 0.025
        await throttle(step * 0.025 + 0.001, f"line {step}")
    assert 4 <= len(recorder.sent) <= 1 / MIN_INTERVAL_SECONDS + 1
    assert recorder.sent[0] == (0.001, "line 0")


async def test_throttle_never_repeats_or_lowers_the_progress_value() -> None:
    recorder, clock = Recorder(), FakeClock()
    throttle = ProgressThrottle(recorder, enabled=True, clock=clock)
    for value in (1.0, 1.0, 0.5, 2.0):
        clock.now += 1
        await throttle(value, "x")
    assert [p for p, _ in recorder.sent] == [1.0, 2.0]


async def test_throttle_sends_nothing_once_closed_and_close_waits_for_a_send_in_flight() -> None:
    release = anyio.Event()
    sent: list[float] = []

    async def slow(progress: float, total: float | None, message: str | None) -> None:
        await release.wait()
        sent.append(progress)

    throttle = ProgressThrottle(slow, enabled=True)
    closed = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(throttle, 1.0, "in flight")
        await anyio.wait_all_tasks_blocked()

        async def close() -> None:
            await throttle.close()
            closed.set()

        tg.start_soon(close)
        await anyio.wait_all_tasks_blocked()
        assert not closed.is_set()
        release.set()
    await throttle(5.0, "after close")
    assert sent == [1.0]


async def test_throttle_message_is_the_last_line_on_one_line() -> None:
    recorder = Recorder()
    throttle = ProgressThrottle(recorder, enabled=True)
    await throttle(0.5, "  building\tthings  \n")
    await throttle(9.0, "")
    assert recorder.sent[0] == (0.5, "building things")


async def test_a_foreground_run_with_a_token_gets_monotonic_rate_limited_progress(
    tmp_path: Path,
) -> None:
    received: list[tuple[float, float, str | None]] = []
    enough = tmp_path / "enough"

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append((anyio.current_time(), progress, message))
        # The run goes on until three reports came and one of them carried its output.
        if len(received) >= 3 and any(m and m.startswith("step ") for _, _, m in received):
            enough.touch()

    command = f"echo step 1; {await_file(enough)}; echo step 2"
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        result = await client.call_tool(
            "shell_run", {"command": command}, progress_callback=on_progress
        )
        returned_at = anyio.current_time()
        count_at_result = len(received)
        await client.call_tool("shell_scene", {})  # a round trip: anything late has arrived
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["exit_code"] == 0, "the run gave up waiting for reports"
    duration = result.structured_content["duration_s"]
    values = [p for _, p, _ in received]
    assert values == sorted(values)
    assert len(set(values)) == len(values)
    # Load can only make reports rarer, never more frequent: this bound holds on any machine.
    assert len(values) <= duration / MIN_INTERVAL_SECONDS + 1
    assert len(received) == count_at_result
    assert all(at <= returned_at for at, _, _ in received)


async def test_a_request_without_a_token_gets_no_progress(tmp_path: Path) -> None:
    inbox = Inbox()
    async with primary_client(make_project(tmp_path / "p"), message_handler=inbox) as (_, client):
        await client.call_tool("shell_run", {"command": "echo a; sleep 0.8; echo b"})
        await client.call_tool("shell_scene", {})
    assert "notifications/progress" not in inbox.methods()


async def test_wait_reports_progress_while_it_waits(tmp_path: Path) -> None:
    values: list[float] = []
    reported = tmp_path / "reported"

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        values.append(progress)
        reported.touch()

    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        await client.call_tool(
            "shell_run",
            {"command": f"echo 1; {await_file(reported)}; echo 2", "tab": "w", "background": True},
        )
        result = await client.call_tool(
            "shell_wait", {"tab": "w", "timeout_seconds": 30}, progress_callback=on_progress
        )
    assert result.structured_content is not None
    assert (result.structured_content["reason"], result.structured_content["exit_code"]) == (
        "exited",
        0,
    )
    assert values
    assert values == sorted(values)


async def test_rerun_reports_progress_like_run(tmp_path: Path) -> None:
    values: list[float] = []
    armed, reported = tmp_path / "armed", tmp_path / "reported"

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        values.append(progress)
        reported.touch()

    # The first run passes straight through; the rerun waits until it has been reported on.
    command = f"if [ -e {armed} ]; then {await_file(reported)}; fi; echo done"
    async with primary_client(make_project(tmp_path / "p")) as (_, client):
        await client.call_tool("shell_run", {"command": command, "tab": "r"})
        armed.touch()
        result = await client.call_tool("shell_rerun", {"tab": "r"}, progress_callback=on_progress)
    assert result.structured_content is not None
    assert (result.structured_content["exit_code"], result.structured_content["output"]) == (
        0,
        "done\n",
    )
    assert values
    assert values == sorted(values)
