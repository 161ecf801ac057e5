"""`habitat mcp` hands its client's stdin and stdout to the host, which serves them itself.

Seen from outside, over raw JSON lines: the host holds the very pipes the client gave the
bridge while the session lasts (it did not fall back to relaying them) and lets go of them,
and of the session, once the client leaves; a host that dies is replaced by one that takes
the same pipes again."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_habitat.host import stdio_handoff
from agent_habitat.reach import find_host, handoff
from agent_habitat.reach.launcher import probe_host
from agent_habitat.testing import eventually

from .test_bridge_e2e import host, kill_host
from .test_bridge_exit_e2e import ECHO_CALL, raw_bridge

pytestmark = [pytest.mark.anyio]

needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc")


def _pipes(pid: int) -> set[str]:
    """What a process's stdin and stdout are (`pipe:[inode]`)."""
    return {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in (0, 1)}


def _holds(pid: int, targets: set[str]) -> set[str]:
    held = set()
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            held.add(os.readlink(f"/proc/{pid}/fd/{name}"))
        except OSError:
            continue  # closed meanwhile
    return held & targets


def _heard(sock: socket.socket) -> bytes:
    """What came back before the end (a reset: the door closed with our hello unread)."""
    try:
        return sock.recv(1)
    except ConnectionResetError:
        return b""


async def _status(project: Path) -> dict[str, Any]:
    status = await anyio.to_thread.run_sync(probe_host, host(project))
    assert status is not None
    return status


async def _sessions(project: Path) -> int:
    sessions: int = (await _status(project))["stdio_sessions"]
    return sessions


@pytest.mark.e2e
@needs_proc
async def test_the_host_serves_the_clients_pipes_and_lets_go_of_them(project: Path) -> None:
    async with raw_bridge(project) as client:
        await client.handshake()
        await client.send(ECHO_CALL)
        answer = await client.answer("echo")
        assert answer["result"]["structuredContent"]["output"] == "hi\n"
        pipes = _pipes(client.process.pid)
        pid = host(project).pid
        assert _holds(pid, pipes) == pipes  # served by the host, not relayed
        assert await _sessions(project) == 1
        assert await client.close_stdin_and_wait() == 0
    await eventually(lambda: not _holds(pid, pipes), within=30)

    async def ended() -> bool:
        return await _sessions(project) == 0

    await eventually(ended, within=30)


@pytest.mark.e2e
@needs_proc
async def test_the_host_started_after_a_death_takes_the_same_pipes(project: Path) -> None:
    async with raw_bridge(project) as client:
        await client.handshake()
        pipes = _pipes(client.process.pid)
        dead = await kill_host(project)
        await client.send({**ECHO_CALL, "id": "after"})
        answer = await client.answer("after")
        assert answer["result"]["structuredContent"]["output"] == "hi\n"
        record = find_host(project)
        assert record is not None
        assert record.pid != dead
        assert _holds(record.pid, pipes) == pipes
        assert await _sessions(project) == 1
        assert await client.close_stdin_and_wait() == 0


@pytest.mark.e2e
async def test_a_large_request_leaves_the_books_whole_for_the_next_host(project: Path) -> None:
    # A request larger than the bridge's socket holds: its notes fill the socket, and the
    # host waits for the bridge to read them before it takes the request, so the bridge's
    # books hold all of it when the host dies: the next host is handed no torn line, and
    # the call after it is answered. (Before, the notes' tail waited in the dead host's
    # memory: the next host read half a line, answered a parse error, and "after" hung.)
    content = "x" * 1_500_000 + "\n"
    async with raw_bridge(project) as client:
        await client.handshake()
        args = {"path": str(project / "big.txt"), "content": content}
        call = {"jsonrpc": "2.0", "id": "big", "method": "tools/call"}
        await client.send({**call, "params": {"name": "file_write", "arguments": args}})
        written = await client.answer("big")
        assert not written["result"].get("isError"), written
        await kill_host(project)
        await client.send({**ECHO_CALL, "id": "after"})
        seen = await client.answers_until("after")
        assert seen[-1]["result"]["structuredContent"]["output"] == "hi\n"
        assert all("error" not in m for m in seen), seen  # no parse error of a torn line
    assert (project / "big.txt").read_text() == content


async def test_a_peer_of_another_uid_gets_no_word(monkeypatch: pytest.MonkeyPatch) -> None:
    # The door checks the peer first: a connection from someone else is closed unanswered
    # (the owner-only folder keeps them out already; this is the second lock).
    monkeypatch.setattr(handoff, "peer_uid", lambda sock: os.getuid() + 1)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.setblocking(False)
    with theirs:
        read, write = os.pipe()
        try:
            socket.send_fds(theirs, [handoff.frame(handoff.HELLO, b"{}")], [read, write])
            theirs.sendall(handoff.frame(handoff.PREFIX))
            await stdio_handoff._session(ours, None, None, Path("/"))  # type: ignore[arg-type]
            assert _heard(theirs) == b""
        finally:
            os.close(read)
            os.close(write)
    assert ours.fileno() == -1
