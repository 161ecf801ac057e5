"""A host killed at any step of its writes to a handed-over stdout leaves the client exactly
one answer per request: each step of `Outbox.put` (the write into the outbox, each note,
each splice to stdout, each wait for a full stdout) is, in turn, the one the host dies at,
and the bridge's books (`reach/books.Books`) settle what it left.

Before the outbox, a host killed between writing an answer to stdout and noting it left
the bridge owing that request: the client got its answer, then "the host restarted" for
the same id."""

from __future__ import annotations

import fcntl
import json
import os
import socket
from typing import Any

import anyio
import pytest

from agent_habitat.host import stdio_outbox
from agent_habitat.host.stdio_outbox import Outbox
from agent_habitat.reach.books import Books
from agent_habitat.reach.bridge import HOST_RESTARTED
from agent_habitat.reach.handoff import Frames, Handoff, frame

pytestmark = pytest.mark.anyio

OUTBOX_BYTES = 64 * 1024
CLIENT_PIPE_BYTES = 16 * 1024


def _request(request_id: int) -> bytes:
    call = {"name": "shell_run", "arguments": {"command": "echo hi"}}
    msg = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call}
    return json.dumps(msg).encode() + b"\n"


def _answer(request_id: int, size: int) -> bytes:
    result = {"content": [{"type": "text", "text": "x" * size}], "isError": False}
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}, separators=(",", ":"))
    return line.encode() + b"\n"


NOTIFICATION = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
# Small; larger than the client's pipe (it waits for the client); larger than the outbox
# (in parts). Request 4 is never answered by the host.
LINES: list[tuple[bytes, bytes | None]] = [
    (_answer(1, 100), b"1"),
    (NOTIFICATION, None),
    (_answer(2, 3 * CLIENT_PIPE_BYTES), b"2"),
    (_answer(3, 3 * OUTBOX_BYTES), b"3"),
]
REQUESTS = (1, 2, 3, 4)


class Died(BaseException):
    """The host's SIGKILL: nothing of it runs after this."""


class Steps:
    """Counts the host's steps; the `die_at`th never happens."""

    def __init__(self, die_at: int) -> None:
        self.die_at = die_at
        self.taken = 0

    def step(self) -> None:
        if self.taken == self.die_at:
            raise Died
        self.taken += 1


class StepOs:
    """`os` for the outbox: each write and splice is a step."""

    def __init__(self, steps: Steps) -> None:
        self._steps = steps

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def write(self, fd: int, data: Any) -> int:
        self._steps.step()
        return os.write(fd, data)

    def splice(self, *args: Any, **kwargs: Any) -> int:
        self._steps.step()
        return os.splice(*args, **kwargs)


async def _read_all(fd: int, into: bytearray, reading: anyio.Event) -> None:
    await reading.wait()
    while True:
        await anyio.wait_readable(fd)
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            continue
        if not chunk:
            return
        into += chunk


async def _session(
    die_at: int, client_reads: bool, monkeypatch: pytest.MonkeyPatch
) -> tuple[bytes, bool]:
    """One host's writes, dying at its step `die_at` (or, when the client does not read,
    while it waits for it at the latest): what the client read in the end, and whether the
    host died at that step."""
    steps = Steps(die_at)
    monkeypatch.setattr(stdio_outbox, "os", StepOs(steps))
    client_r, stdout = os.pipe()
    fcntl.fcntl(stdout, fcntl.F_SETPIPE_SZ, CLIENT_PIPE_BYTES)
    os.set_blocking(client_r, False)
    outbox_r, outbox_w = os.pipe()
    fcntl.fcntl(outbox_w, fcntl.F_SETPIPE_SZ, OUTBOX_BYTES)
    os.set_blocking(outbox_r, False)
    host_sock, bridge_sock = socket.socketpair()
    urgent, urgent_peer = socket.socketpair()
    books = Books()
    books.took(b"".join(_request(i) for i in REQUESTS))

    def note(kind: bytes, payload: bytes) -> bool:
        steps.step()
        host_sock.sendall(frame(kind, payload))
        return True

    # The host's own copies, as SCM_RIGHTS gives them: its death closes them.
    outbox = Outbox(os.dup(stdout), os.dup(outbox_r), outbox_w, note)
    seen = bytearray()
    reading = anyio.Event()
    if client_reads:
        reading.set()
    host = anyio.CancelScope()
    over = anyio.Event()
    died = False

    async def serve() -> None:
        nonlocal died
        with host:
            try:
                for line, key in LINES:
                    await outbox.put(line, key)
            except Died:
                died = True
        over.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(_read_all, client_r, seen, reading)
        tg.start_soon(serve)
        if not client_reads:
            await anyio.wait_all_tasks_blocked()  # it died, or waits for the client
            host.cancel()  # killed wherever it is
        await over.wait()
        outbox.close()
        host_sock.close()
        # The bridge: the notes to the host's end, the outbox, its answers for the rest.
        handoff = Handoff(bridge_sock, Frames(bridge_sock), 0, urgent, outbox_r)
        assert handoff.watch(books) == b""
        data = books.after_host(handoff.left())
        handoff.close()
        urgent_peer.close()
        reading.set()
        os.set_blocking(stdout, True)
        await anyio.to_thread.run_sync(_write_all, stdout, data)
        os.close(stdout)
    os.close(client_r)
    return bytes(seen), died


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _answers(seen: bytes) -> dict[int, list[dict[str, Any]]]:
    answers: dict[int, list[dict[str, Any]]] = {i: [] for i in REQUESTS}
    for line in seen.split(b"\n")[:-1]:
        try:
            msg = json.loads(line)
        except ValueError:
            continue  # a torn line: the end of it came from nobody
        if "method" not in msg:
            answers[msg["id"]].append(msg)
    return answers


@pytest.mark.parametrize("client_reads", [True, False], ids=["reading", "not-reading"])
async def test_a_host_killed_at_any_step_leaves_one_answer_per_request(
    client_reads: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = {json.loads(line)["id"]: line for line, key in LINES if key is not None}
    die_at = 0
    while True:
        seen, died = await _session(die_at, client_reads, monkeypatch)
        answers = _answers(seen)
        real = set()
        for request_id, got in answers.items():
            assert len(got) == 1, (die_at, request_id, got)
            [answer] = got
            if answer["result"]["content"][0]["text"] == HOST_RESTARTED:
                continue
            # A real answer arrives whole, as the host wrote it.
            line = json.dumps(answer, separators=(",", ":")).encode() + b"\n"
            assert line == whole[request_id], (die_at, request_id)
            real.add(request_id)
        assert seen.count(NOTIFICATION) <= 1
        if not died:
            break  # the host got through, or was killed waiting for the client
        die_at += 1
    if client_reads:
        assert real == {1, 2, 3}  # the last run: the host got through every line
    else:
        assert real == {1, 2}  # killed while the client's pipe held part of 2: delivered
    assert die_at > len(LINES)  # many steps to die at
