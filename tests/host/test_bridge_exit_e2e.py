"""`habitat mcp` leaves when its client closes stdin, whatever state the relay is in.

A stdio client closes the server's stdin to end the session, waits a short grace (2 s in
the SDK) and then kills it. These tests speak raw JSON lines, close stdin, and wait for
the bridge's own exit with a bound far below the waits it could otherwise be stuck in
(a hung host forever, a host start 30 s).
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from agent_habitat.reach import find_host
from agent_habitat.reach.launcher import host_files, probe_host
from agent_habitat.testing import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HABITAT = str(Path(sys.executable).with_name("habitat"))
# Far below what a stuck bridge would wait, and ample for a loaded machine.
EXIT_BOUND_SECONDS = 10.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "exit-test", "version": "0"},
    },
}
SLEEP_CALL = {
    "jsonrpc": "2.0",
    "id": "sleep",
    "method": "tools/call",
    "params": {"name": "shell_run", "arguments": {"command": "sleep 30"}},
}


class RawClient:
    """JSON-RPC lines to and from a `habitat mcp` process."""

    def __init__(self, process: Process) -> None:
        self.process = process
        assert process.stdout is not None
        self._lines = BufferedByteReceiveStream(process.stdout)

    async def send(self, msg: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(msg).encode() + b"\n")

    async def answer(self, request_id: str) -> dict[str, Any]:
        # The first answer waits for a host start (the launcher allows it 60 s).
        with anyio.fail_after(150):
            while True:
                msg: dict[str, Any] = json.loads(await self._lines.receive_until(b"\n", 2**24))
                if msg.get("id") == request_id and "method" not in msg:
                    return msg

    async def answers_until(self, request_id: str) -> list[dict[str, Any]]:
        """Every answer (not notifications) up to the one to `request_id`."""
        seen = []
        with anyio.fail_after(150):
            while True:
                msg: dict[str, Any] = json.loads(await self._lines.receive_until(b"\n", 2**24))
                if "method" not in msg:
                    seen.append(msg)
                if msg.get("id") == request_id and "method" not in msg:
                    return seen

    async def handshake(self) -> None:
        await self.send(INITIALIZE)
        assert "result" in await self.answer("init")
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def stdout_ends(self) -> None:
        """Read what is left of the bridge's stdout until every holder of it let go."""
        assert self.process.stdout is not None
        with anyio.fail_after(EXIT_BOUND_SECONDS):
            while True:
                try:
                    await self.process.stdout.receive()
                except anyio.EndOfStream:
                    return

    async def close_stdin_and_wait(self) -> int:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()
        with anyio.fail_after(EXIT_BOUND_SECONDS):
            return await self.process.wait()


ECHO_CALL = {
    "jsonrpc": "2.0",
    "id": "echo",
    "method": "tools/call",
    "params": {"name": "shell_run", "arguments": {"command": "echo hi"}},
}
# A host nobody uses exits after this long (hosts the bridge starts inherit its env).
SHORT_IDLE = {"HABITAT_HOST_IDLE_SECONDS": "2"}


@asynccontextmanager
async def raw_bridge(project: Path, env: dict[str, str] | None = None) -> AsyncIterator[RawClient]:
    process = await anyio.open_process(
        [HABITAT, "mcp", "--project", str(project)],
        cwd=project,
        stderr=None,
        env={**os.environ, **(env or {})},
    )
    client = RawClient(process)
    try:
        yield client
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    # A host that served the client's stdio itself lets go of it once the bridge is gone.
    await client.stdout_ends()


def _hosts(project: Path) -> list[psutil.Process]:
    """Live host processes of `project` (a reaped-late zombie is not one)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = proc.info["cmdline"] or []
        if proc.info["status"] == psutil.STATUS_ZOMBIE or "agent_habitat.host" not in cmdline:
            continue
        if str(project) in cmdline:
            found.append(proc)
    return found


async def _running(project: Path) -> bool:
    record = find_host(project)
    status = None if record is None else await anyio.to_thread.run_sync(probe_host, record)
    return bool(status and status["running"])


async def test_an_idle_bridge_exits_when_stdin_closes(shared_project: Path) -> None:
    async with raw_bridge(shared_project) as client:
        await client.handshake()
        assert await client.close_stdin_and_wait() == 0


async def test_a_bridge_with_a_request_pending_exits_when_stdin_closes(
    shared_project: Path,
) -> None:
    # The module's host: the other tests there only shake hands, so the run is this one's
    # (its `sleep 30` ends with the module's host at the latest).
    async with raw_bridge(shared_project) as client:
        await client.handshake()
        await client.send(SLEEP_CALL)
        await eventually(lambda: _running(shared_project), within=30)
        assert await client.close_stdin_and_wait() == 0


async def test_a_bridge_whose_host_hangs_exits_when_stdin_closes(project: Path) -> None:
    async with raw_bridge(project) as client:
        await client.handshake()
        await client.send(SLEEP_CALL)
        await eventually(lambda: _running(project), within=30)
        record = find_host(project)
        assert record is not None
        os.kill(record.pid, signal.SIGSTOP)
        try:
            # A notification the stopped host never answers: its delivery hangs.
            cancel = {"requestId": "sleep", "reason": "test"}
            await client.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
            )
            assert await client.close_stdin_and_wait() == 0
        finally:
            os.kill(record.pid, signal.SIGCONT)  # it finds the bridge gone, lets go of stdout


async def test_a_bridge_restarting_its_host_exits_when_stdin_closes(project: Path) -> None:
    async with raw_bridge(project) as client:
        await client.handshake()
        record = find_host(project)
        assert record is not None
        files = host_files(project)
        fd = os.open(files.lock, os.O_RDWR)
        try:
            async with anyio.create_task_group() as tg:
                # Blocked in flock before the kill, so the lock passes to us, not to the host
                # the bridge starts next: that host can never come up while we hold it.
                tg.start_soon(anyio.to_thread.run_sync, fcntl.flock, fd, fcntl.LOCK_EX)
                os.kill(record.pid, signal.SIGKILL)
            os.ftruncate(fd, 0)  # the dead host's record: no host to find
            await client.send({**SLEEP_CALL, "id": "after"})

            def restarting() -> bool:
                return "a host already runs" in files.log.read_text(encoding="utf-8")

            # The bridge started a host, which found the lock taken: it is now waiting for
            # a host to come up (for up to 30 s).
            await eventually(restarting, within=30)
            assert await client.close_stdin_and_wait() == 0
        finally:
            os.close(fd)


async def test_a_bridge_told_to_stop_exits_while_its_client_keeps_stdin_open(
    shared_project: Path,
) -> None:
    async with raw_bridge(shared_project) as client:
        await client.handshake()
        client.process.send_signal(signal.SIGTERM)
        with anyio.fail_after(EXIT_BOUND_SECONDS):
            assert await client.process.wait() == 0


def _tgkill(pid: int, tid: int, sig: int) -> None:
    """Send `sig` to one thread of `pid`, as the kernel may pick any thread for kill()."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(_SYS_TGKILL, pid, tid, sig) != 0:
        raise OSError(ctypes.get_errno(), "tgkill")


_SYS_TGKILL = {"x86_64": 234, "aarch64": 131}.get(os.uname().machine)


@pytest.mark.skipif(_SYS_TGKILL is None, reason="tgkill's number known for x86_64 and aarch64")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
async def test_a_stop_signal_taken_by_another_thread_still_ends_the_bridge(
    shared_project: Path, sig: signal.Signals
) -> None:
    # kill() may deliver to any thread that does not block the signal (the kernel passes
    # over the main thread while it has a signal pending). Python runs handlers only in
    # the main thread, between bytecodes: one blocked reading stdin would never see it.
    async with raw_bridge(shared_project) as client:
        await client.handshake()
        pid = client.process.pid
        others = [t.id for t in psutil.Process(pid).threads() if t.id != pid]
        assert others, "the bridge relays on threads of its own"
        _tgkill(pid, others[0], sig)
        with anyio.fail_after(EXIT_BOUND_SECONDS):
            assert await client.process.wait() == 0


async def test_a_host_restarted_just_before_the_bridge_closes_exits_when_idle(
    project: Path,
) -> None:
    async with raw_bridge(project, SHORT_IDLE) as client:
        await client.handshake()
        first = find_host(project)
        assert first is not None
        os.kill(first.pid, signal.SIGKILL)
        await client.send({**ECHO_CALL, "id": "after"})
        assert "result" in await client.answer("after")
        restarted = find_host(project)
        assert restarted is not None
        assert restarted.pid != first.pid
        assert await client.close_stdin_and_wait() == 0
    # Like any host: no client, no run, so it leaves once idle, and nothing else is left.
    await eventually(lambda: not _hosts(project), within=60)
    assert find_host(project) is None


async def test_a_bridge_closed_while_its_host_restarts_leaves_no_host_behind(
    project: Path,
) -> None:
    async with raw_bridge(project, SHORT_IDLE) as client:
        await client.handshake()
        first = find_host(project)
        assert first is not None
        os.kill(first.pid, signal.SIGKILL)
        await client.send({**ECHO_CALL, "id": "after"})
        # The bridge has spawned the next host; close before that host can answer.
        await eventually(lambda: any(p.pid != first.pid for p in _hosts(project)), within=30)
        assert await client.close_stdin_and_wait() == 0
    await eventually(lambda: not _hosts(project), within=90)
    assert find_host(project) is None
