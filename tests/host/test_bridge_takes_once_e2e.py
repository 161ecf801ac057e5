"""A real host SIGKILLed after it moved a client's bytes out of stdin and before their
`INPUT` frame reached its bridge: the bytes are the next host's, none lost, none taken
twice.

The test is the bridge: it hands a real host a stdin, a stdout and the pipes of the
exchange (`reach.handoff.Handoff.open`) and reads none of the host's notes, so that the
host, once the connection is full, waits with stdin's next bytes moved into the inbox and
their frame unsent. The host is killed there (the inbox holds bytes: a condition, no
sleep); the books and `Handoff.untaken` then say what the bridge would hand on. Before the
inbox the host read those bytes into its own memory and died with them."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from pathlib import Path

import anyio
import pytest

from agent_habitat.reach import ensure_host
from agent_habitat.reach.books import Books
from agent_habitat.reach.handoff import Handoff
from agent_habitat.reach.launcher import host_files
from agent_habitat.testing import eventually

from .test_bridge_e2e import kill_host

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

# Notifications no server answers, each larger than a splice into the connection moves at
# once: the connection (about 200 kB) is full long before the last.
PAD = 60 * 1024
LINES = 40


def _notification(n: int) -> bytes:
    params = {"n": n, "pad": "x" * PAD}
    msg = {"jsonrpc": "2.0", "method": "notifications/habitat_test", "params": params}
    return json.dumps(msg).encode() + b"\n"


CLIENT = b"".join(_notification(n) for n in range(LINES))


class Kept(Books):
    """The books, and every byte the host took, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.all_taken = b""

    def took(self, data: bytes) -> None:
        self.all_taken += data
        super().took(data)


async def test_a_host_killed_with_bytes_out_of_stdin_and_unframed_loses_none(
    project: Path,
) -> None:
    await anyio.to_thread.run_sync(ensure_host, project)
    stdin, client_in = os.pipe()
    client_out, stdout = os.pipe()
    books = Kept()
    handoff = await anyio.to_thread.run_sync(
        lambda: Handoff.open(
            str(host_files(project).stdio_socket), books, b"", stdin=stdin, stdout=stdout
        )
    )
    os.close(stdout)  # the host's copy and ours: the client's stdout is the host's alone

    def client() -> None:
        view = memoryview(CLIENT)
        try:
            while view:
                view = view[os.write(client_in, view) :]
        except BrokenPipeError:
            pass
        finally:
            os.close(client_in)

    writer = threading.Thread(target=client, daemon=True)
    writer.start()
    poked: list[bytes] = []

    def stuck() -> bool:
        """The host asked for room (`DRAIN`): it waits (then gives up and leaves the
        session) with stdin's next bytes taken out and their frame unsent."""
        with contextlib.suppress(BlockingIOError):
            poked.append(handoff.urgent.recv(64, socket.MSG_DONTWAIT))
        return bool(poked)

    try:
        await eventually(stuck, within=60)
        await kill_host(project)
        assert await anyio.to_thread.run_sync(handoff.watch, books) == b""  # it is gone
        untaken = handoff.untaken()
        os.set_blocking(stdin, True)
        rest = b""
        while chunk := await anyio.to_thread.run_sync(os.read, stdin, 1 << 20):
            rest += chunk  # what the bridge reads itself: the client's next bytes
    finally:
        handoff.close()
        os.close(stdin)
        os.close(client_out)
        writer.join(timeout=30)
    assert books.all_taken + untaken + rest == CLIENT
    assert untaken  # the window was hit: bytes out of stdin, in no whole frame
