"""A warm checker's start waits for `initialize` counting only the time at its normal
priority (rungs/lsp.py `wait(counts=…)`, warm_checker.WarmChecker.initialize): the
warm-up's starts run at background priority, where a loaded machine gives them little CPU,
and a start starved there is slow, not stuck (destr 2.0.5, a new user's trial at load ~25:
the warm eslint's start got no answer in 60 s and the linter ran cold)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import anyio
import pytest

from agent_habitat.proc import ProcessRecord, is_alive, process_create_time
from agent_habitat.verify.rungs import warm_checker
from agent_habitat.verify.rungs.lsp import LspClient, LspError, _waited
from agent_habitat.workspace import Workspace

# A server that answers `initialize` only once the test lets it (a file appears).
_SERVER = r"""
import json, os, sys, time
gate = sys.argv[1]
def read():
    length = 0
    while (line := sys.stdin.buffer.readline().strip()):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(sys.stdin.buffer.read(length))
msg = read()
while not os.path.exists(gate):
    time.sleep(0.05)
body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}).encode()
sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
sys.stdout.buffer.flush()
sys.stdin.buffer.read()
"""


def test_time_that_does_not_count_is_not_the_timeout() -> None:
    done = threading.Event()
    polls: list[int] = []

    def counts() -> bool:
        polls.append(1)
        if len(polls) >= 4:  # past the 0.05 s timeout several times over, uncounted
            done.set()
        return False

    assert _waited(done, 0.05, counts, bound=60.0)
    assert len(polls) >= 4


def test_counted_time_and_the_bound_still_end_the_wait() -> None:
    never = threading.Event()
    assert not _waited(never, 0.05, lambda: True, bound=60.0)
    assert not _waited(never, 60.0, lambda: False, bound=0.05)
    assert not _waited(never, 0.01, None, bound=None)


def _checker(tmp_path: Path, gate: Path) -> tuple[warm_checker.WarmChecker, LspClient]:
    workspace = Workspace.for_project(tmp_path)
    argv = [sys.executable, "-c", _SERVER, str(gate)]
    spec = warm_checker.ServerSpec(tool="probe", argv=argv, env={}, slot="node:probe")
    warm = warm_checker.WarmChecker(workspace, tmp_path, spec, "k")
    client = LspClient(
        argv, cwd=tmp_path, env={}, log=tmp_path / "probe.log", settings=lambda _s: None
    )
    return warm, client


@pytest.mark.timeout(120)
def test_a_start_at_background_priority_is_not_timed_out_until_hurried(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "gate"
    warm, client = _checker(tmp_path, gate)
    try:
        # As `spawn` leaves a warm-up's start: lowered, not hurried.
        warm.background, warm.priority = True, "autogroup nice 10 while it starts"
        answered: list[object] = []
        failed: list[str] = []

        def initialize() -> None:
            try:
                answered.append(warm.initialize(client, {}, 0.2))
            except LspError as exc:
                failed.append(str(exc))

        waiter = threading.Thread(target=initialize)
        waiter.start()
        waiter.join(1.5)  # far past the 0.2 s timeout: background time does not count
        assert waiter.is_alive()
        assert not failed
        gate.touch()
        waiter.join(60)
        assert answered == [{}]
        assert not failed
    finally:
        client.close()
        client.proc.kill()  # the caller kills what is left (this server never reads again)
        client.reap()


@pytest.mark.timeout(120)
def test_a_hurried_start_is_timed_out_on_its_own_time(tmp_path: Path) -> None:
    warm, client = _checker(tmp_path, tmp_path / "never")
    try:
        warm.background, warm.priority = True, "autogroup nice 10 while it starts"
        warm.hurried = True  # a verify waits on it: its time counts
        with pytest.raises(LspError, match="initialize: no answer within 0 s"):
            warm.initialize(client, {}, 0.2)
    finally:
        client.close()
        client.proc.kill()  # the caller kills what is left (this server never reads again)
        client.reap()


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_start_under_way_is_recorded_and_stopped_by_release(tmp_path: Path) -> None:
    """A host stopped while a warm checker starts stops that start's server too (a node
    tsc's first check, started by the warm-up, outlived the host that started it)."""
    workspace = Workspace.for_project(tmp_path).ensure()
    argv = [sys.executable, "-c", _SERVER, str(tmp_path / "never")]
    spec = warm_checker.ServerSpec(tool="probe", argv=argv, env={}, slot="node:probe")
    outcome: list[tuple[warm_checker.WarmChecker | None, str | None]] = []

    async def start() -> None:
        outcome.append(await warm_checker.start(workspace, tmp_path, spec, "k", background=True))

    async with anyio.create_task_group() as tg:
        tg.start_soon(start)
        try:
            with anyio.fail_after(60):
                while not (live := warm_checker.live(workspace)):
                    await anyio.sleep(0.02)
        except TimeoutError:
            (tmp_path / "never").touch()  # not recorded while it starts: let it end, and fail
            raise
        assert live[0]["starting"] is True
        assert " starting (owned by pid" in warm_checker.describe(workspace)
        record = ProcessRecord(live[0]["pid"], process_create_time(live[0]["pid"]) or 0.0)
        released = await warm_checker.release(workspace)
        left = is_alive(record)
        if left:  # what this test exists for; killed here so that the start ends
            os.kill(record.pid, signal.SIGKILL)
    assert released
    assert not left
    warm, said = outcome[0]
    assert warm is None
    assert said is not None
    assert "probe's language server did not start" in said
    assert warm_checker.live(workspace) == []
