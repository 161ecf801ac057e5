"""`habitat mcp` hands its client's stdin and stdout to the workspace host.

The relay (`bridge.py`) copies every line through this process and the host's HTTP: four
hops a call, more than the whole of an embedded server's answer. Instead the bridge
connects to the host's `stdio.sock` (0600 in the owner-only state folder; each end checks
the other's uid too) and passes its stdin and stdout there (SCM_RIGHTS); the host serves a
plain MCP stdio session on them (`host/stdio_handoff.py`), as `habitat mcp --embedded`
serves its own, and the client talks to the server with no process between.

The bridge keeps its own copies and waits. The connection carries the host's notes, so
that the bridge knows what it would know relaying: every byte the host took from stdin
(`INPUT`: the client's handshake, its requests, its cancellations) and each request
answered (`ANSWERED`). The host takes stdin's bytes through an inbox, a pipe the bridge
made and reads only once the host is gone (`host/stdio_intake.py`): moved there from
stdin, then into an `INPUT` frame in the kernel, so a byte a dead host left in the inbox,
or in a frame it did not finish, was never taken, and the bridge hands it to the next host.
The host writes stdout through an outbox, a pipe the bridge made and reads only once the
host is gone (`host/stdio_outbox.py`): a line goes into it whole, is
noted, then moved to stdout in the kernel, so whatever a dead host left there is the
client's, not yet delivered, and the bridge delivers it (`PART`/`WHOLE` around a line
longer than the outbox, which goes in parts). When the host goes away (killed, crashed,
stopped) the bridge does what the relay does: it delivers the outbox, answers each request
the host took and did not answer (its outcome is unknown), ends a torn line first, and goes
on with a host started again and the client's handshake replayed, handed the same stdio,
or relaying when that host refuses.
`END`: the host saw stdin close, the session is over. `MOVED`: a `project_open` of another
workspace; the host hands back the client's bytes from that call on, reads stdin no more
and sends what it still owes as `LINE`s here; the bridge relays the rest of the session
(`bridge.py` moves it). The bridge leaving ends the session: the host closes its copies.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import socket
import stat
import struct
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from agent_habitat.errors import HabitatError

from .link import LinkClosed

if TYPE_CHECKING:
    from .books import Books

__all__ = [
    "ANSWERED",
    "DRAIN",
    "END",
    "HELLO",
    "INPUT",
    "LINE",
    "MOVED",
    "NOW",
    "OK",
    "PART",
    "PREFIX",
    "REFUSED",
    "VERSION",
    "WHOLE",
    "Frames",
    "Handoff",
    "HandoffLink",
    "HandoffRefused",
    "can_hand_off",
    "frame",
    "peer_uid",
]

VERSION = 3
HEADER = struct.Struct(">cI")
"""A frame: its kind (one byte), the payload's length, the payload."""
MAX_FRAME = 64 * 1024 * 1024
DRAIN_SECONDS = 2
"""How long the host's notes may wait in the socket before the bridge reads them."""
HELLO = b"h"  # bridge: JSON {version, cwd, replay, initialized}; stdin, stdout, urgent,
# the outbox's read and write ends, the inbox's read and write ends attached
PREFIX = b"x"  # bridge: the client's bytes no host has taken yet, read before stdin
OK = b"k"  # host: JSON {pid}; it serves the session
REFUSED = b"r"  # host: why not (text)
INPUT = b"i"  # host: bytes it took from stdin (one cut short: not taken)
ANSWERED = b"a"  # host: the `_key` of a request whose answer is in the outbox, whole
PART = b"p"  # host: a line longer than the outbox goes in parts (its answer's key, or b"")
WHOLE = b"w"  # host: that line's last part is in the outbox (the key again)
MOVED = b"m"  # host: the client's bytes from a `project_open` that moves the session on
LINE = b"l"  # host, after MOVED: a line for the client
END = b"e"  # host: stdin closed, the session is over
NOW = b"!"  # host, on the urgent socket: an outcome (MOVED, END) follows
DRAIN = b"."  # host, on the urgent socket: the connection is full, read it
OUTBOX_BYTES = 1024 * 1024
"""The outbox's size asked for (the kernel may give less): a line up to it goes whole."""
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


class HandoffRefused(HabitatError):
    """The host would not serve the client's stdio: the bridge relays instead."""


def frame(kind: bytes, payload: bytes = b"") -> bytes:
    return HEADER.pack(kind, len(payload)) + payload


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a unix socket; None where the platform
    cannot say (no `SO_PEERCRED`): then no stdio is handed over."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def _pollable(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def can_hand_off(stdin: int = 0, stdout: int = 1) -> bool:
    """Whether the host could serve these: pipes or sockets (what a client gives; the host
    waits on them on its event loop), on a platform that says who is at a socket's end."""
    has_fds = hasattr(socket, "send_fds") and hasattr(socket, "SO_PEERCRED")
    return has_fds and hasattr(os, "splice") and _pollable(stdin) and _pollable(stdout)


class Frames:
    """Frames from a blocking socket, one at a time; None at its end."""

    def __init__(self, sock: socket.socket, rest: bytes = b"") -> None:
        self._sock = sock
        self._buf = bytearray(rest)

    def _fill(self) -> bool:
        try:
            data = self._sock.recv(256 * 1024)
        except OSError:
            return False
        self._buf += data
        return bool(data)

    def take(self) -> list[tuple[bytes, bytes]]:
        """The frames that have come whole so far, without waiting."""
        while True:
            try:
                data = self._sock.recv(256 * 1024, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                break  # the end: `next` says so
            if not data:
                break
            self._buf += data
        frames = []
        while len(self._buf) >= HEADER.size:
            kind, size = HEADER.unpack_from(self._buf)
            end = HEADER.size + size
            if size > MAX_FRAME or len(self._buf) < end:
                break
            frames.append((kind, bytes(self._buf[HEADER.size : end])))
            del self._buf[:end]
        return frames

    def unfinished(self) -> tuple[bytes, bytes] | None:
        """At the end: the frame it cut short (its kind, the part of its payload that came);
        None when it ended between frames."""
        if len(self._buf) < HEADER.size:
            return None
        kind, _ = HEADER.unpack_from(self._buf)
        return kind, bytes(self._buf[HEADER.size :])

    def next(self) -> tuple[bytes, bytes] | None:
        while len(self._buf) < HEADER.size:
            if not self._fill():
                return None
        kind, size = HEADER.unpack_from(self._buf)
        if size > MAX_FRAME:
            return None
        end = HEADER.size + size
        while len(self._buf) < end:
            if not self._fill():
                return None
        payload = bytes(self._buf[HEADER.size : end])
        del self._buf[:end]
        return kind, payload


class Handoff:
    """The client's stdio served by a host: the connection its notes come on."""

    def __init__(
        self, sock: socket.socket, frames: Frames, pid: int, urgent: socket.socket, outbox: int
    ) -> None:
        self.sock = sock
        self.frames = frames
        self.pid = pid
        self.urgent = urgent
        self.outbox = outbox
        """The outbox's read end: what the host left in it once it is gone."""
        self.inbox = -1
        """The inbox's read end: what the host moved out of stdin and did not take."""
        self.handed_back = b""

    @classmethod
    def open(
        cls, path: str, books: Books, prefix: bytes, *, stdin: int = 0, stdout: int = 1
    ) -> Handoff:
        """Hand stdin and stdout to the host listening at `path`: `LinkClosed` when none
        listens there, `HandoffRefused` when it will not serve them."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
        except OSError as exc:
            sock.close()
            raise LinkClosed(f"cannot connect to {path}: {exc}") from exc
        urgent, theirs = socket.socketpair()
        outbox, into = os.pipe()
        with contextlib.suppress(OSError):  # over the user's pipe quota: the default size
            fcntl.fcntl(into, _F_SETPIPE_SZ, OUTBOX_BYTES)
        os.set_blocking(outbox, False)
        inbox, inbox_w = os.pipe()
        os.set_blocking(inbox, False)
        fds = (stdin, stdout, theirs.fileno(), outbox, into, inbox, inbox_w)
        try:
            return cls._hand(path, sock, books, prefix, fds, urgent)
        except BaseException:
            urgent.close()
            os.close(outbox)
            os.close(inbox)
            raise
        finally:
            theirs.close()
            os.close(into)  # the host's alone: its end is the outbox's end
            os.close(inbox_w)

    @classmethod
    def _hand(
        cls,
        path: str,
        sock: socket.socket,
        books: Books,
        prefix: bytes,
        fds: tuple[int, ...],
        urgent: socket.socket,
    ) -> Handoff:
        try:
            uid = peer_uid(sock)
            if uid != os.getuid():
                raise HandoffRefused(f"{path} is served by uid {uid}, not by you ({os.getuid()})")
            hello = json.dumps(books.hello(os.getcwd()), ensure_ascii=False).encode()
            socket.send_fds(sock, [frame(HELLO, hello)], list(fds))
            sock.sendall(frame(PREFIX, prefix))
            frames = Frames(sock)
            answer = frames.next()
        except OSError as exc:
            sock.close()
            raise LinkClosed(f"the host at {path} hung up: {exc}") from exc
        except HandoffRefused:
            sock.close()
            raise
        if answer is None:
            sock.close()
            raise LinkClosed(f"the host at {path} hung up before it took the session")
        kind, payload = answer
        if kind != OK:
            sock.close()
            why = payload.decode("utf-8", "replace") if kind == REFUSED else "no answer"
            raise HandoffRefused(f"the host would not serve this session's stdio: {why}")
        pid = json.loads(payload).get("pid")
        if books.held:  # the host took them with the hello (`prefix` ends with them)
            books.took(books.held)
            books.held = b""
        handoff = cls(sock, frames, pid if isinstance(pid, int) else 0, urgent, fds[3])
        handoff.inbox = fds[5]
        return handoff

    def watch(self, books: Books) -> bytes:
        """Keep `books` until the session ends here: `END` (the client left), `MOVED`
        (`handed_back` holds the client's next bytes), or b"" (the host went away).

        The notes are read when the host hangs up, when it says on `urgent` that one
        matters now (`MOVED`, `END`) or that the socket is full (`DRAIN`: the rest waits
        in the host's memory, which a host's death loses), and every `DRAIN_SECONDS`
        (they wait in the socket meanwhile): not at each call, where this process would
        take a core from the host and the client twice a call. Without `POLLRDHUP` (not
        Linux), as they come.
        """
        hangup = getattr(select, "POLLRDHUP", 0)
        poller = select.poll()
        poller.register(self.sock, hangup or select.POLLIN)
        poller.register(self.urgent, select.POLLIN)
        while True:
            ready = dict(poller.poll(DRAIN_SECONDS * 1000))
            if self.sock.fileno() in ready:
                return self._read(books)  # to the end, or the frame that ends it here
            if self.urgent.fileno() in ready:
                try:
                    pokes = self.urgent.recv(4096, socket.MSG_DONTWAIT)
                except (BlockingIOError, InterruptedError):
                    pokes = DRAIN
                if pokes != DRAIN * len(pokes):  # an outcome, or the host's end
                    return self._read(books)
            for kind, payload in self.frames.take():
                if (outcome := self._note(books, kind, payload)) is not None:
                    return outcome

    def _read(self, books: Books) -> bytes:
        while (item := self.frames.next()) is not None:
            if (outcome := self._note(books, *item)) is not None:
                return outcome
        return b""

    def _note(self, books: Books, kind: bytes, payload: bytes) -> bytes | None:
        if kind == INPUT:
            books.took(payload)
        elif kind == ANSWERED:
            books.answered(payload)
        elif kind == PART:
            books.torn = True
            books.torn_key = payload
        elif kind == WHOLE:
            books.torn = False
            books.answered(payload)
        elif kind == MOVED:
            self.handed_back = books.handed_back(payload)
            return MOVED
        elif kind == END:
            return END
        return None

    def left(self) -> bytes:
        """What the gone host left in the outbox: the client's, not yet delivered."""
        return _drain(self.outbox)

    def untaken(self) -> bytes:
        """What the gone host moved out of stdin and never took, once its notes are read to
        their end: the payload of an `INPUT` frame it did not finish, then the inbox's."""
        cut = self.frames.unfinished()
        head = cut[1] if cut is not None and cut[0] == INPUT else b""
        return head + _drain(self.inbox)

    def close(self) -> None:
        """Hang up: the host ends the session and closes its copies of stdin and stdout."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.urgent.close()
        for fd in (self.outbox, self.inbox):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.outbox = self.inbox = -1


def _drain(fd: int) -> bytes:
    """What a pipe holds now (b"" when it is closed)."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 1024 * 1024)
        except (BlockingIOError, InterruptedError):
            break
        except OSError:
            break  # closed: nothing was left
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


class HandoffLink:
    """A host that handed the session back (`MOVED`) as the relay's `LineLink`: it sends
    what it still owes as lines and takes none."""

    def __init__(self, handoff: Handoff) -> None:
        self._handoff = handoff

    def send_line(self, line: bytes) -> None:
        raise LinkClosed("this host handed the session back")

    def lines(self) -> Iterator[bytes]:
        while (item := self._handoff.frames.next()) is not None:
            kind, payload = item
            if kind == LINE:
                yield payload
            elif kind == END:
                return

    def close(self) -> None:
        self._handoff.close()


def warn(text: str) -> None:
    print(f"habitat WARNING {__name__}: {text}", file=sys.stderr, flush=True)
