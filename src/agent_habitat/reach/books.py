"""The bridge's books: what the client sent to the hosts that served its stdio.

A host serving the client's stdio (`handoff.py`) notes every byte it took from stdin and
every request it answered; the bridge keeps the account here, as the relay (`bridge.py`)
keeps it. When the host goes away, the books say what the client is owed: the outbox's
lines, the end of a torn line, an answer to each request taken and not answered, and the
handshake to replay to the next host.
"""

from __future__ import annotations

from typing import Any

from .bridge import Message, _answer_key, _encode, _is_request, _key, _parse, restarted_reply
from .handoff import VERSION

__all__ = ["Books"]


class Books:
    """What the client sent to the hosts that served its stdio, as the relay keeps it: its
    handshake, the requests taken and not yet answered, the bytes after the last newline."""

    def __init__(self) -> None:
        self.initialize: Message | None = None
        self.initialized = False
        self.pending: dict[str, Message] = {}
        self.partial = b""
        """The client's bytes after the last newline a host read: the start of a line."""
        self.torn = False
        """A long line the host began and whose last part never reached the outbox."""
        self.torn_key = b""
        self.replays = 0
        self.taken = 0
        """How many of the client's bytes hosts have read."""
        self.held = b""
        """The client's bytes a gone host moved out of stdin and never took: the next host
        takes them first, after `partial`."""

    def took(self, data: bytes) -> None:
        """A host read `data` from stdin."""
        self.taken += len(data)
        *lines, self.partial = (self.partial + data).split(b"\n")
        for line in lines:
            if line.strip():
                self._take(line)

    def _take(self, line: bytes) -> None:
        msg = _parse(line)
        if msg is None:
            return  # the host's screen answered it
        method = msg.get("method")
        if _is_request(msg):
            self.pending[_key(msg["id"])] = msg
        if method == "initialize" and "id" in msg:
            self.initialize = msg
        elif method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled":
            # A cancelled request gets no answer; the host owes nothing for it any more.
            params = msg.get("params")
            if isinstance(params, dict) and "requestId" in params:
                self.pending.pop(_key(params["requestId"]), None)

    def answered(self, key: bytes) -> None:
        self.pending.pop(key.decode("utf-8", "replace"), None)

    def delivered(self, data: bytes) -> None:
        """A gone host's outbox, delivered by the bridge: the lines it ends or holds whole
        are the client's now, answers included; a long line without its last part stays
        torn."""
        if self.torn:
            if not data.endswith(b"\n"):
                return
            self.torn = False  # its last part was there: whole now
            self.answered(self.torn_key)
        # Whole lines, but the first may be the end of one begun on stdout (its key noted).
        for line in data.split(b"\n")[:-1]:
            if (key := _answer_key(line)) is not None:
                self.pending.pop(key, None)
        if not data.endswith(b"\n") and data:
            self.torn = True  # not a host's way of writing: the line is ended all the same

    def handed_back(self, data: bytes) -> bytes:
        """The bytes a host read and did not take (it ends with the partial line): what the
        client sends next. Its requests are owed by no host."""
        for line in data.split(b"\n")[:-1]:
            msg = _parse(line)
            if msg is not None and _is_request(msg):
                self.pending.pop(_key(msg["id"]), None)
        self.partial = b""
        return data

    def after_host(self, left: bytes) -> bytes:
        """What the client gets once the host that served it is gone: what it `left` in the
        outbox, the end of a line it tore, an answer to each request it owed."""
        out = [left]
        self.delivered(left)
        if self.torn:
            out.append(b"\n")
            self.torn = False
        out += [_encode(restarted_reply(request)) for request in self.take_owed()]
        return b"".join(out)

    def take_owed(self) -> list[Message]:
        owed = list(self.pending.values())
        self.pending.clear()
        return owed

    def hello(self, cwd: str) -> dict[str, Any]:
        replay = None
        if self.initialize is not None:
            self.replays += 1
            replay = {**self.initialize, "id": f"habitat-bridge-replay-{self.replays}"}
        return {
            "version": VERSION,
            "cwd": cwd,
            "replay": replay,
            "initialized": self.initialized,
        }
