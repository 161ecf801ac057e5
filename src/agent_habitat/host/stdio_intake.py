"""The host's reads of a client's stdin that its bridge handed over: through an inbox.

Reading a request from stdin and noting it to the bridge (`INPUT`) are two system calls. A
host killed between them took the request with it unnoted: the bridge owed it no answer,
the next host never saw it, and the client waited for an answer that never came.

So stdin is never read. Its bytes are moved by `splice` (in the kernel) into the inbox, a
pipe the bridge made and holds the read end of (`reach/handoff.py`); the host copies them
out (`tee`: the inbox keeps them) to learn what they are, says an `INPUT` frame's head to
the bridge, and moves them from the inbox into the connection behind it (`splice` again).
Each byte is in stdin or in the inbox (not taken: the bridge hands it to the next host) or
in an `INPUT` frame that reached the bridge whole (taken: the bridge answers the requests
in it if the host does not), never both and never neither, whenever the host dies; the
host acts on bytes only once their frame is whole. A frame cut short is not taken: its
bytes go to the next host with the inbox's.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
from collections.abc import Callable

from agent_habitat.reach import handoff as wire

__all__ = ["Gone", "Inbox", "can_tee"]

_F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
_NONBLOCK = getattr(os, "SPLICE_F_NONBLOCK", 2)
_MOVE = getattr(os, "SPLICE_F_MOVE", 1)


def _libc_tee() -> Callable[..., int] | None:
    try:
        tee = ctypes.CDLL(None, use_errno=True).tee
    except (AttributeError, OSError):
        return None
    tee.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_size_t, ctypes.c_uint]
    tee.restype = ctypes.c_ssize_t
    return tee


_TEE = _libc_tee()


def can_tee() -> bool:
    """Whether this platform copies one pipe into another without taking from it."""
    return _TEE is not None and hasattr(os, "splice")


def tee(fd_in: int, fd_out: int, count: int) -> int:
    """`tee(2)`: up to `count` bytes of pipe `fd_in` copied into pipe `fd_out`, left in
    `fd_in`. `BlockingIOError` when `fd_in` is empty or `fd_out` full."""
    assert _TEE is not None
    while True:
        copied = _TEE(fd_in, fd_out, count, _NONBLOCK)
        if copied >= 0:
            return copied
        code = ctypes.get_errno()
        if code != errno.EINTR:
            raise OSError(code, os.strerror(code))


class Gone(Exception):
    """The bridge reads no more: the session ends."""


Head = Callable[[bytes], bool]
"""Says raw bytes to the bridge (an `INPUT` frame's head); False when the bridge is gone."""
Room = Callable[[], bool]
"""Waits until the bridge's connection has room; False when the bridge is gone."""


class Inbox:
    """stdin's bytes, each taken only once the bridge has it in an `INPUT` frame."""

    def __init__(
        self, stdin: int, inbox_r: int, inbox_w: int, control: int, head: Head, room: Room
    ) -> None:
        self._stdin = stdin
        self._r = inbox_r
        self._w = inbox_w
        self._control = control
        self._head = head
        self._room = room
        for fd in (stdin, inbox_r, inbox_w):
            os.set_blocking(fd, False)
        self._capacity = fcntl.fcntl(inbox_w, _F_GETPIPE_SZ)
        # This process's own: what the inbox holds is copied here to be read.
        self._peek_r, self._peek_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            fcntl.fcntl(self._peek_w, _F_SETPIPE_SZ, self._capacity)
        except OSError:
            pass  # over the user's pipe quota: copied in parts
        self._peek_capacity = fcntl.fcntl(self._peek_w, _F_GETPIPE_SZ)
        self.closed = False

    def take(self) -> bytes | None:
        """The bytes stdin has now, taken (b"": none yet); None at its end. `Gone` when the
        bridge reads no more."""
        try:
            held = os.splice(self._stdin, self._w, self._capacity, flags=_NONBLOCK | _MOVE)
        except BlockingIOError:
            return b""
        except OSError:
            return None  # the client's end is broken: as its end
        if held <= 0:
            return None
        taken = bytearray()
        while held:
            part = self._pass(min(held, self._peek_capacity))
            taken += part
            held -= len(part)
        return bytes(taken)

    def _pass(self, count: int) -> bytes:
        """The inbox's first `count` bytes (at most), copied out, then moved to the bridge
        behind their frame's head."""
        copied = tee(self._r, self._peek_w, count)
        data = b""
        while len(data) < copied:
            data += os.read(self._peek_r, copied - len(data))
        if not self._head(wire.HEADER.pack(wire.INPUT, copied)):
            raise Gone
        moved = 0
        while moved < copied:
            try:
                got = os.splice(self._r, self._control, copied - moved, flags=_NONBLOCK | _MOVE)
            except BlockingIOError:
                if not self._room():
                    raise Gone from None
                continue
            except OSError as exc:
                raise Gone from exc
            if got <= 0:
                raise Gone
            moved += got
        return data

    def close(self) -> None:
        """This process's copies of stdin and the inbox are closed."""
        if self.closed:
            return
        self.closed = True
        for fd in (self._stdin, self._r, self._w, self._peek_r, self._peek_w):
            try:
                os.close(fd)
            except OSError:
                pass
