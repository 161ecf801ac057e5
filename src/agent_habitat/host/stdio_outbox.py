"""The host's writes to a client's stdout that its bridge handed over: through an outbox.

Writing an answer to stdout and noting to the bridge that it was written are two system
calls. A host killed between them (the write wakes the client, which may take the core
first) left the bridge owing a request the client already had the answer to: it answered
it again ("the host restarted"). A note sent first would lose the answer instead.

So every line goes through the outbox, a pipe the bridge made and holds the read end of
(`reach/handoff.py`): the line is written into it whole, then noted (`ANSWERED` with the
request's key), then moved to stdout by `splice` (in the kernel; no copy through this
process). Each byte is in the outbox (not delivered: the bridge delivers what a dead host
left there) or moved to stdout (delivered), never both and never neither, whenever the
host dies. A line longer than the outbox goes in parts: `PART` (with the key) before the
first, `WHOLE` (the key again) once the last is in the outbox; a host dead before that
leaves a torn line, which the bridge ends, and the request still owed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import Callable

import anyio

from agent_habitat.reach import handoff as wire

__all__ = ["Outbox"]

_F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)
_SPLICE_FLAGS = getattr(os, "SPLICE_F_NONBLOCK", 2) | getattr(os, "SPLICE_F_MOVE", 1)

Note = Callable[[bytes, bytes], bool]
"""Says one note to the bridge; False when it could not (the bridge is gone)."""


class Outbox:
    """Lines to the client's stdout, each in the bridge's reach until it is delivered."""

    def __init__(self, stdout: int, outbox_r: int, outbox_w: int, note: Note) -> None:
        self._stdout = stdout
        self._r = outbox_r
        self._w = outbox_w
        self._note = note
        self._queued = 0
        """Bytes in the outbox not yet moved (a put cancelled while stdout was full)."""
        self._closed = False
        for fd in (stdout, outbox_r, outbox_w):
            os.set_blocking(fd, False)
        self._capacity = fcntl.fcntl(outbox_w, _F_GETPIPE_SZ)

    async def put(self, line: bytes, key: bytes | None) -> None:
        """Deliver `line` (newline included); `key`: the request it answers."""
        if self._closed:
            raise anyio.BrokenResourceError
        await self._flush()  # what a cancelled put left: it goes first
        if len(line) <= self._capacity:
            self._push(line)
            if key is not None:
                self._say(wire.ANSWERED, key)
            await self._flush()
            return
        self._say(wire.PART, key or b"")
        view = memoryview(line)
        while view:
            part, view = view[: self._capacity], view[self._capacity :]
            self._push(part)
            if not view:
                self._say(wire.WHOLE, key or b"")
            await self._flush()

    def _say(self, kind: bytes, payload: bytes) -> None:
        if not self._note(kind, payload):
            # Unsaid, the bridge would not know this line is delivered: leave it in the
            # outbox, which the bridge delivers (the host's end of it is near anyway).
            self._closed = True
            raise anyio.BrokenResourceError

    def _push(self, data: bytes | memoryview) -> None:
        # Into an empty pipe at least this large: one write, whole (no partial write for
        # a kill to cut short: a write with room never waits, and a signal is taken on
        # its way out).
        try:
            written = os.write(self._w, data)
        except OSError as exc:
            self._closed = True
            raise anyio.BrokenResourceError from exc
        self._queued += written
        if written != len(data):  # not a pipe's behaviour: stop rather than tear lines
            self._closed = True
            raise anyio.BrokenResourceError

    async def flush(self) -> None:
        """Move what a cancelled put left in the outbox."""
        await self._flush()

    async def _flush(self) -> None:
        while self._queued:
            try:
                moved = os.splice(self._r, self._stdout, self._queued, flags=_SPLICE_FLAGS)
            except BlockingIOError:
                await _writable(self._stdout)
                continue
            except OSError as exc:  # the client is gone
                self._closed = True
                raise anyio.BrokenResourceError from exc
            if moved <= 0:
                self._closed = True
                raise anyio.BrokenResourceError
            self._queued -= moved

    def close(self) -> None:
        """Write no more; this process's copies of stdout and the outbox are closed."""
        self._closed = True
        for fd in (self._stdout, self._r, self._w):
            with contextlib.suppress(OSError):
                os.close(fd)


async def _writable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_writer(fd, wake)
    try:
        await ready
    finally:
        loop.remove_writer(fd)
