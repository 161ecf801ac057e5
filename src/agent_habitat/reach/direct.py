"""The bridge while a host serves its client's stdio itself (`handoff.py`).

A thread (`bridge-direct`) hands stdin and stdout to the workspace's host (found, or
started as the relay would) and keeps the books from the host's notes. The main thread
reads nothing: it waits for the client to close stdin (a hang-up, seen without taking a
byte), a stop signal, or the thread's word. When a host goes away the thread delivers what
it left in the outbox and answers what it owed, as the relay does (`books.Books.after_host`),
and hands the same stdio to the next host with the client's handshake replayed and the
bytes the gone host moved out of stdin and never took (`Handoff.untaken`) first. The
session is relayed from then on when a host cannot take it (an older host, a refusal) or
hands it back to move to another workspace.
"""

from __future__ import annotations

import os
import select
import threading
from pathlib import Path
from typing import Any

from agent_habitat.errors import HabitatError
from agent_habitat.workspace import Workspace

from .books import Books
from .bridge import LineLink, Message
from .files import HostFiles
from .handoff import END, MOVED, Handoff, HandoffLink, HandoffRefused, warn
from .link import LinkClosed

__all__ = ["Direct", "Relay"]

_ATTEMPTS = 3
_HANGUP = select.POLLHUP | select.POLLERR | select.POLLNVAL | getattr(select, "POLLRDHUP", 0)


class Relay:
    """How the relay goes on after the direct session (nothing to go on from: a new one)."""

    def __init__(self) -> None:
        self.resumed = False
        self.ended = False
        """The session is over: the client left."""
        self.failure: BaseException | None = None
        self.initialize: Message | None = None
        self.initialized = False
        self.current: LineLink | None = None
        """A host that handed the session back and still owes `owed`."""
        self.owed: dict[str, Message] = {}
        self.prefix = b""
        """The client's bytes no host has taken, before stdin's."""


class Direct:
    def __init__(self, root: Path, out: Any) -> None:
        self._root = root
        self._out = out
        self._books = Books()
        self._result = Relay()
        self._told_r, self._told_w = os.pipe()
        self.handoff: Handoff | None = None
        self.restarts = 0

    def serve(self, wake: int) -> Relay:
        """Until the session ends or must be relayed. Raises what a stop signal's handler
        raises (in this, the main thread)."""
        threading.Thread(target=self._run, name="bridge-direct", daemon=True).start()
        poller = select.poll()
        poller.register(0, getattr(select, "POLLRDHUP", 0))  # a hang-up only: no byte taken
        poller.register(wake, select.POLLIN)
        poller.register(self._told_r, select.POLLIN)
        while True:
            for fd, events in poller.poll():
                if fd == wake:
                    os.read(wake, 512)  # the handler runs as this thread goes on
                elif fd == self._told_r:
                    return self._result
                elif fd == 0 and events & _HANGUP:
                    self._result.ended = True  # the client left: so does the session
                    return self._result

    def _tell(self) -> None:
        os.write(self._told_w, b"!")

    def _run(self) -> None:
        books = self._books
        result = self._result
        try:
            handoff = self._hand_off(b"")
            fruitless = taken = 0
            while handoff is not None:
                self.handoff = handoff
                outcome = handoff.watch(books)
                if outcome == END:
                    result.ended = True
                    return
                if outcome == MOVED:
                    result.current = HandoffLink(handoff)
                    result.owed = dict(books.pending)
                    result.prefix = handoff.handed_back
                    books.pending.clear()
                    break
                left = handoff.left()
                books.held += handoff.untaken()
                handoff.close()
                self._answer_owed(left)
                # A host that takes the session and drops it at once, again and again:
                # the relay goes on instead.
                fruitless = fruitless + 1 if books.taken == taken else 0
                if fruitless >= _ATTEMPTS:
                    warn("the habitat host keeps dropping the session: relaying it")
                    result.prefix = books.partial + books.held
                    break
                self.restarts += 1
                warn(
                    f"the habitat host went away: handing the session to the next ({self.restarts})"
                )
                taken = books.taken
                handoff = self._hand_off(books.partial + books.held)
            else:
                result.prefix = books.partial + books.held
            result.resumed = True
            result.initialize = books.initialize
            result.initialized = books.initialized
        except BaseException as exc:  # said to the main thread, which leaves
            result.failure = exc
        finally:
            self._tell()

    def _answer_owed(self, left: bytes) -> None:
        """The host went away: what it left in the outbox is delivered, and what it took and
        did not answer gets an answer saying so."""
        os.set_blocking(1, True)  # the host's event loop made it non-blocking
        self._out.write(self._books.after_host(left))

    def _hand_off(self, prefix: bytes) -> Handoff | None:
        """The stdio handed to the host of the workspace (started when none runs); None
        when it cannot take them (the relay goes on)."""
        files = HostFiles(Workspace.for_project(self._root))
        files.prepare()  # refuses a state folder others could plant a socket in
        door = str(files.stdio_socket)
        try:
            return Handoff.open(door, self._books, prefix)
        except LinkClosed:
            pass  # no host runs (or one is on its way out): start one
        except HandoffRefused as exc:
            warn(f"relaying: {exc}")
            return None
        from .launcher import ensure_host, wait_gone  # to start one: seconds anyway

        for attempt in range(1, _ATTEMPTS + 1):
            handle = ensure_host(self._root)
            if not files.stdio_socket.exists():
                return None  # a host without the door (older, or no SO_PEERCRED): relay
            try:
                return Handoff.open(door, self._books, prefix)
            except LinkClosed:
                # A host on its way out still holds the lock for a moment after its
                # sockets closed: wait for that, then start the next.
                if attempt == _ATTEMPTS:
                    raise
                wait_gone(self._root, handle.record.pid)
            except HandoffRefused as exc:
                warn(f"relaying: {exc}")
                return None
        raise HabitatError("unreachable")
