"""The bridge on real stdin/stdout: lines in, lines out, relayed as they are.

The bridge neither validates nor re-encodes what it relays: the host screens the client's
lines as the embedded server screens stdin, and its lines are already what stdout wants.
The main thread reads stdin (pipe, socket, terminal or file alike) and leaves the process
when it ends or a SIGTERM/SIGHUP comes (to whichever thread the kernel gave it), whatever
the relay thread is doing (a host start may take seconds); lines go to stdout whole, one
writer at a time.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import NoReturn

from agent_habitat.errors import HabitatError
from agent_habitat.workspace import Workspace

from .bridge import Bridge
from .direct import Direct, Relay
from .files import HostFiles
from .handoff import can_hand_off
from .link import Link, LinkClosed

__all__ = ["serve_bridge"]

_READ_BYTES = 256 * 1024
_CONNECT_ATTEMPTS = 3


class _Stop(Exception):
    """SIGTERM or SIGHUP: leave as if stdin had closed."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def _lines(fd: int, wake: int, pending: bytes = b"") -> Iterator[bytes]:
    """The client's lines (newline kept) until EOF; blank lines skipped.

    Waits on `wake` too, the signal wakeup pipe: the kernel may hand SIGTERM to any
    thread, and Python runs the handler only in this one, between bytecodes. A read
    blocked on stdin would not return for a signal another thread took. `pending`: the
    client's bytes a host read and handed back, before stdin's."""
    *done, pending = pending.split(b"\n")
    for line in done:
        if line.strip():
            yield line + b"\n"
    while True:
        ready, _, _ = select.select([fd, wake], [], [])
        if wake in ready:
            os.read(wake, 512)  # the handler runs as this thread goes on
        if fd not in ready:
            continue
        try:
            chunk = os.read(fd, _READ_BYTES)
        except BlockingIOError:
            continue  # non-blocking still, as a host that served it left it
        if not chunk:
            break
        pending += chunk
        if b"\n" not in chunk:
            continue
        *done, pending = pending.split(b"\n")
        for line in done:
            if line.strip():
                yield line + b"\n"
    if pending.strip():
        yield pending + b"\n"


class _Out:
    """Lines to fd 1, each whole: writers never tear each other's lines."""

    def __init__(self, fd: int = 1) -> None:
        self._fd = fd
        self._lock = threading.Lock()

    def write(self, line: bytes) -> None:
        with self._lock, contextlib.suppress(OSError):  # a client gone: its stdin's end stops us
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view) :]


def _connect(where: Path) -> Link:
    files = HostFiles(Workspace.for_project(where))
    files.prepare()  # refuses a state folder others could plant a socket in
    with contextlib.suppress(LinkClosed):
        # A running host answers on its socket: that is all the bridge needs to know,
        # without reading the lock (its record model costs pydantic's import, a
        # good part of the time before the bridge can answer `initialize`).
        return Link.open(str(files.socket))
    from .launcher import ensure_host, wait_gone  # to start one: seconds anyway

    for attempt in range(1, _CONNECT_ATTEMPTS + 1):
        handle = ensure_host(where)
        try:
            return Link.open(handle.record.socket)
        except LinkClosed:
            # A host on its way out (killed, stopping) still holds the lock for a
            # moment after its socket closed: wait for that, then start the next.
            if attempt == _CONNECT_ATTEMPTS:
                raise
            wait_gone(where, handle.record.pid)
    raise AssertionError("unreachable")


def serve_bridge(root: Path) -> NoReturn:
    """Serve this process's stdio through the host of workspace `root` (started if needed):
    handed to it (`handoff.py`) when it can take them, else relayed (`bridge.py`).

    Leaves the process (os._exit) when done: a thread may still be starting a host or
    waiting on one.
    """

    def failed(exc: BaseException) -> NoReturn:
        # The host could not be started (or restarted): bad configuration, unsafe
        # permissions; anything else is a bug, said as one.
        if isinstance(exc, HabitatError):
            print(f"habitat mcp: {exc}", file=sys.stderr, flush=True)
        else:
            import traceback

            traceback.print_exception(exc, file=sys.stderr)
            sys.stderr.flush()
        os._exit(2)

    out = _Out()
    wake, woken = os.pipe()
    os.set_blocking(wake, False)
    os.set_blocking(woken, False)
    signal.set_wakeup_fd(woken, warn_on_full_buffer=False)
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGHUP, _stop)
    code = 0
    bridge: Bridge | None = None
    try:
        relay = Relay()
        if can_hand_off():
            relay = Direct(root, out).serve(wake)
            if relay.failure is not None:
                failed(relay.failure)
            if relay.ended:
                raise _Stop
        bridge = Bridge(_connect, root, out.write, on_error=failed)
        if relay.resumed:
            os.set_blocking(0, True)
            os.set_blocking(1, True)
            bridge.resume(relay.initialize, relay.initialized, relay.current, relay.owed)
        bridge.start()
        for line in _lines(0, wake, relay.prefix):
            bridge.put(line)
    except (_Stop, OSError):
        pass
    except KeyboardInterrupt:
        code = 130
    if bridge is not None:
        bridge.close()
    sys.stderr.flush()
    os._exit(code)
