"""A host killed at any step of its reads of a handed-over stdin loses no request and takes
none twice: each step of `Inbox.take` (the move from stdin into the inbox, the copy out of
it, the frame's head, each move into the bridge's connection, each wait for room there)
is, in turn, the one the host dies at, and the bridge's books (`reach/books.Books`) and
what it hands the next host (`Handoff.untaken`, then what stdin still holds) settle it.

Before the inbox, the host read stdin, then noted what it read: a host killed between the
two took requests the bridge never heard of, and their client waited forever."""

from __future__ import annotations

import fcntl
import json
import os
import select
import socket
import threading
from typing import Any

import pytest

from agent_habitat.host import stdio_intake
from agent_habitat.host.stdio_intake import Gone, Inbox, tee
from agent_habitat.reach.books import Books
from agent_habitat.reach.handoff import Frames, Handoff

INBOX_BYTES = 256 * 1024
CONTROL_BYTES = 4096
REQUESTS = (1, 2, 3, 4)


def _request(request_id: int, size: int) -> bytes:
    call = {"name": "shell_run", "arguments": {"command": "echo " + "x" * size}}
    msg = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call}
    return json.dumps(msg).encode() + b"\n"


# Small ones, one larger than the inbox (it goes in parts), and the start of a line.
CLIENT = (
    _request(1, 10)
    + _request(2, 10)
    + _request(3, 2 * INBOX_BYTES)
    + _request(4, 100)
    + b'{"jsonrpc":"2.0","id":5,'
)


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
    """`os` for the inbox: each splice and read is a step."""

    def __init__(self, steps: Steps) -> None:
        self._steps = steps

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def splice(self, *args: Any, **kwargs: Any) -> int:
        self._steps.step()
        return os.splice(*args, **kwargs)

    def read(self, fd: int, count: int) -> bytes:
        self._steps.step()
        return os.read(fd, count)


class Kept(Books):
    """The books, and every byte hosts took, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.all_taken = b""

    def took(self, data: bytes) -> None:
        self.all_taken += data
        super().took(data)


def _stdin(kind: str) -> tuple[int, threading.Thread]:
    """The host's stdin, and the client writing its bytes there, then closing its end."""
    if kind == "pipe":
        ours, theirs = os.pipe()
    else:
        a, b = socket.socketpair()
        ours, theirs = a.detach(), b.detach()

    def client() -> None:
        view = memoryview(CLIENT)
        try:
            while view:
                view = view[os.write(theirs, view) :]
        except BrokenPipeError:
            pass  # the host died and the test took the rest: stdin's reader is gone
        finally:
            os.close(theirs)

    writer = threading.Thread(target=client, daemon=True)
    writer.start()
    return ours, writer


def _session(
    die_at: int, kind: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[bool, bytes, Kept, bytes]:
    """One host's reads, dying at its step `die_at`: whether it died there, what it acted
    on, the bridge's books, and the bytes the next host gets (untaken, then stdin's)."""
    steps = Steps(die_at)
    monkeypatch.setattr(stdio_intake, "os", StepOs(steps))

    def step_tee(fd_in: int, fd_out: int, count: int) -> int:
        steps.step()
        return tee(fd_in, fd_out, count)

    monkeypatch.setattr(stdio_intake, "tee", step_tee)
    stdin, writer = _stdin(kind)
    inbox_r, inbox_w = os.pipe()
    fcntl.fcntl(inbox_w, fcntl.F_SETPIPE_SZ, INBOX_BYTES)
    os.set_blocking(inbox_r, False)
    host_sock, bridge_sock = socket.socketpair()
    host_sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, CONTROL_BYTES)
    host_sock.setblocking(False)
    urgent, urgent_peer = socket.socketpair()
    outbox_r, outbox_w = os.pipe()
    early = bytearray()
    """What the bridge read while the host lived (it drains when poked)."""

    def head(raw: bytes) -> bool:  # as the session's `_Control.send`
        steps.step()
        view = memoryview(raw)
        while view:
            try:
                view = view[host_sock.send(view) :]
            except BlockingIOError:
                room()
        return True

    def room() -> bool:
        steps.step()
        bridge_sock.setblocking(False)
        try:
            early.extend(bridge_sock.recv(1 << 20))
        except BlockingIOError:
            pass
        bridge_sock.setblocking(True)
        return True

    # The host's own copies, as SCM_RIGHTS gives them: its death closes them.
    inbox = Inbox(os.dup(stdin), os.dup(inbox_r), inbox_w, host_sock.fileno(), head, room)
    acted = b""
    died = False
    try:
        while select.select([stdin], [], [], 60)[0] and (data := inbox.take()) is not None:
            acted += data
    except Died:
        died = True
    except Gone:
        raise AssertionError("the bridge never leaves here") from None
    inbox.close()
    host_sock.close()
    books = Kept()
    handoff = Handoff(bridge_sock, Frames(bridge_sock, bytes(early)), 0, urgent, outbox_r)
    handoff.inbox = inbox_r
    assert handoff.watch(books) == b""  # the host is gone
    untaken = handoff.untaken()
    handoff.close()
    urgent_peer.close()
    os.close(outbox_w)
    os.set_blocking(stdin, True)
    rest = b""
    while chunk := os.read(stdin, 1 << 20):  # to the client's end
        rest += chunk
    os.close(stdin)
    writer.join()
    return died, acted, books, untaken + rest


def _ids(data: bytes) -> set[int]:
    return {json.loads(line)["id"] for line in data.split(b"\n")[:-1]}


@pytest.mark.parametrize("kind", ["pipe", "socket"])
def test_a_host_killed_at_any_step_of_its_reads_loses_no_request(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    die_at = 0
    while True:
        died, acted, books, after = _session(die_at, kind, monkeypatch)
        # Every byte of the client's is taken (once) or the next host's, in order.
        assert books.all_taken + after == CLIENT, die_at
        # The host acted on taken bytes only: all of them, but for what it took last.
        assert books.all_taken.startswith(acted), die_at
        assert len(books.all_taken) - len(acted) <= INBOX_BYTES, die_at
        # Each whole request: owed an answer by the bridge, or the next host's to take.
        owed = set(books.pending)
        coming = _ids(books.partial + after)
        assert {json.loads(key) for key in owed} | coming == set(REQUESTS), die_at
        assert not {json.loads(key) for key in owed} & coming, die_at
        if not died:
            break
        die_at += 1
    assert acted == CLIENT  # the last run: the host got through every byte
    assert books.partial == b'{"jsonrpc":"2.0","id":5,'
    assert die_at > 10  # many steps to die at
