"""`habitat mcp` (not embedded): the client's stdio relayed to the workspace host, line for line.

The bridge holds one line exchange with the host (`reach/link.py`, served by
`host/mcp_stream.py` on `/mcp`) and copies lines both ways as they come: requests,
responses, progress, list_changed, resource updates, the host's own requests such as
`roots/list`, both protocol eras. It parses each line only to keep the books it needs to
survive the host: which of the client's requests the current host has taken and not yet
answered, and the client's `initialize`.

When the host goes away — killed, crashed, stopped — the bridge starts it again, replays
the client's `initialize` and `notifications/initialized` (their answers are swallowed;
the client already has them) and goes on. A line the old host never took (the write
failed: it was already gone) goes to the new one. A request the old host took and did not
answer gets an answer saying it stopped (a tool error for `tools/call`, else a JSON-RPC
error): its outcome is unknown. The client sees one continuous session; its runs went on
in their own sessions meanwhile. Subscriptions are not carried over: a 2026-era
`subscriptions/listen` in flight ends with that error (the client listens again), and
2025-era `resources/subscribe` is not replayed.

`project_open` of a folder outside the current workspace moves the session: the bridge
finds or starts that workspace's host, replays the handshake there, sends the call to it,
and tells the client `notifications/tools/list_changed`. The old host answers what it still
owes and is then let go; it never sees the `project_open`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio

from agent_habitat.errors import HabitatError
from agent_habitat.workspace import scm_root

from .link import LinkClosed

__all__ = [
    "HOST_RESTARTED",
    "HOST_STOPPED",
    "Bridge",
    "Connect",
    "LineLink",
    "restarted_reply",
]

logger = logging.getLogger(__name__)

Message = dict[str, Any]


class LineLink(Protocol):
    """A line exchange with a host (`reach.link.Link`; tests pass a fake)."""

    async def send_line(self, line: bytes) -> None:
        """Write one line; `LinkClosed` when the host is gone (it never took the line)."""

    def lines(self) -> AsyncIterator[bytes]:
        """The host's lines until it goes away."""

    async def aclose(self) -> None: ...


Connect = Callable[[Path], Awaitable[LineLink]]
"""A line exchange with the host of the workspace at that root (started when none runs)."""

HOST_RESTARTED = (
    "the habitat host stopped while this request was in flight and has been restarted; "
    "the request's outcome is unknown (a command it started may still be running: check "
    "shell_scene / shell_last). Send it again if needed."
)
HOST_STOPPED = (
    "the habitat host of the workspace this session left stopped while this request was "
    "in flight; the request's outcome is unknown (check shell_scene / shell_last there)."
)
_INTERNAL_ERROR = -32603
# Restarting a host that dies again at once must end somewhere.
_MAX_ATTEMPTS = 3
_LIST_CHANGED = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def restarted_reply(request: Message, why: str = HOST_RESTARTED) -> Message:
    """The answer to a request the dead host took with it."""
    if request.get("method") == "tools/call":
        result = {"content": [{"type": "text", "text": why}], "isError": True}
        return {"jsonrpc": "2.0", "id": request["id"], "result": result}
    error = {"code": _INTERNAL_ERROR, "message": why}
    return {"jsonrpc": "2.0", "id": request["id"], "error": error}


def _encode(msg: Message) -> bytes:
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _parse(line: bytes) -> Message | None:
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return None  # the host's screen answers it
    return msg if isinstance(msg, dict) else None


def _key(request_id: Any) -> str:
    # JSON ids compared as JSON: 1 and "1" are different requests.
    return json.dumps(request_id)


def _existing_dir(path: str) -> Path | None:
    # As `project.existing_dir` resolves it, but relative to the client's cwd (the bridge's).
    resolved = Path(path).expanduser().resolve()
    return resolved if resolved.is_dir() else None


def _is_project(path: Path) -> bool:
    # Imported here: the bridge's own start stays free of pydantic.
    from agent_habitat.errors import UsageError
    from agent_habitat.project import a_project

    try:
        a_project(path)
    except UsageError:
        return False
    return True


# How the host's SDK writes a message (pydantic, fields in this order): read the kind and id
# from the head of the line, not by parsing a result that may be hundreds of kilobytes.
_ANSWER_HEAD = re.compile(
    rb'\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*"),"(result|error|method)"'
)
_NOTIFICATION_HEAD = b'{"jsonrpc":"2.0","method":'


def _answer_key(line: bytes) -> str | None:
    """The `_key` of the request this line from the host answers; None if it is not an
    answer (a notification, or a request of the host's own)."""
    if line.startswith(_NOTIFICATION_HEAD):
        return None
    if head := _ANSWER_HEAD.match(line):
        return None if head.group(2) == b"method" else _key(json.loads(head.group(1)))
    msg = _parse(line)  # written some other way: read it whole
    if msg is None or "method" in msg or "id" not in msg:
        return None
    return _key(msg["id"])


def _is_request(msg: Message) -> bool:
    return "method" in msg and "id" in msg


@dataclass(eq=False)
class _Conn:
    """One host the session talks (or talked) to, and what it owes the client."""

    link: LineLink
    root: Path
    pending: dict[str, Message] = field(default_factory=dict)
    swallow: set[str] = field(default_factory=set)
    """Answers meant for the bridge (the replayed `initialize`)."""
    replayed: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    """Its reader ended: every answer it sent has been passed on."""
    leaving: bool = False
    """The session moved to another workspace: let go once it owes nothing."""
    settled: bool = False


class Bridge:
    """Relays one client's session to a host, restarting or moving it as needed."""

    def __init__(
        self, connect: Connect, root: Path, write: Callable[[bytes], Awaitable[None]]
    ) -> None:
        self._connect = connect
        self._root = root
        self._write = write
        self._initialize: Message | None = None
        self._initialized = False
        self._replays = 0
        self._conn: _Conn | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._events_in, self._events = anyio.create_memory_object_stream[
            tuple[bytes | None, _Conn | None]
        ](math.inf)
        self.restarts = 0

    async def run(self, lines: AsyncIterator[bytes]) -> None:
        """Relay until `lines` (the client's) ends; that end stops everything at once."""
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._relay)
                async for line in lines:
                    self._events_in.send_nowait((line, None))
                tg.cancel_scope.cancel()
        finally:
            self._events_in.close()
            self._events.close()
            if self._conn is not None:
                with anyio.CancelScope(shield=True):
                    await self._conn.link.aclose()

    async def _relay(self) -> None:
        self._conn = await self._attach(self._root, replay=False)
        async with self._events:
            async for line, died in self._events:
                if died is not None:
                    await self._settle(died)
                elif line is not None:
                    await self._from_client(line)

    async def _from_client(self, line: bytes) -> None:
        msg = _parse(line)
        if msg is not None:
            moved = await self._maybe_move(msg, line)
            if moved is None:
                return
            line = moved
        for _ in range(_MAX_ATTEMPTS):
            conn = self._conn
            assert conn is not None
            request = msg if msg is not None and _is_request(msg) else None
            key = _key(request["id"]) if request is not None else None
            if request is not None and key is not None:
                conn.pending[key] = request  # before the write: its answer may come at once
            try:
                await conn.link.send_line(line)
            except LinkClosed:
                # Never taken: the host was gone already. The new one gets it.
                if key is not None:
                    conn.pending.pop(key, None)
                await self._settle(conn)
                continue
            if msg is not None:
                self._noted(msg, conn)
            return
        if msg is not None and _is_request(msg):
            await self._write(_encode(restarted_reply(msg, "the habitat host keeps failing")))

    def _noted(self, msg: Message, conn: _Conn) -> None:
        method = msg.get("method")
        if method == "initialize" and "id" in msg:
            self._initialize = msg
        elif method == "notifications/initialized":
            self._initialized = True
        elif method == "notifications/cancelled":
            # A cancelled request gets no answer; the host owes nothing for it any more.
            params = msg.get("params")
            if isinstance(params, dict) and "requestId" in params:
                conn.pending.pop(_key(params["requestId"]), None)

    async def _attach(self, root: Path, *, replay: bool) -> _Conn:
        """A line exchange with the host of `root`, its reader running, the handshake
        replayed when the client has made one."""
        link = await self._connect(root)
        conn = _Conn(link, root)
        assert self._tg is not None
        self._tg.start_soon(self._read, conn)
        if not replay or self._initialize is None:
            return conn
        self._replays += 1
        replay_key = _key(replay_id := f"habitat-bridge-replay-{self._replays}")
        conn.swallow.add(replay_key)
        try:
            await link.send_line(_encode({**self._initialize, "id": replay_id}))
            with anyio.fail_after(60):  # a host that takes the line but never answers
                await conn.replayed.wait()
            if replay_key in conn.swallow:
                raise LinkClosed("the host went away before it answered")
            if self._initialized:
                await link.send_line(_encode(_INITIALIZED))
        except (LinkClosed, TimeoutError) as exc:
            conn.settled = True  # never the session's: nothing to answer, nothing to restart
            await link.aclose()
            raise LinkClosed(f"the new host failed during the handshake replay: {exc}") from exc
        return conn

    async def _read(self, conn: _Conn) -> None:
        try:
            async for line in conn.link.lines():
                key = _answer_key(line)
                if key is not None:
                    if key in conn.swallow:
                        conn.swallow.discard(key)
                        conn.replayed.set()
                        continue
                    conn.pending.pop(key, None)
                await self._write(line)
                if conn.leaving and not conn.pending:
                    break  # a host the session left has answered all it owed
        finally:
            conn.done.set()
            conn.replayed.set()  # a handshake waiting on a dead host wakes (and fails)
            # The relay has ended (the client left): nobody needs to hear of it.
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._events_in.send_nowait((None, conn))

    async def _settle(self, conn: _Conn) -> None:
        """`conn`'s host is gone (or let go): answer what it owed; restart it if current."""
        if conn.settled:
            return
        conn.settled = True
        # Only for a host that is gone (its reader sees the end) or owes nothing (closed
        # below): answers it did send are passed on before any request is given up.
        await conn.done.wait()
        await conn.link.aclose()
        why = HOST_STOPPED if conn.leaving else HOST_RESTARTED
        owed = list(conn.pending.values())
        conn.pending.clear()
        if conn is self._conn:
            await self._restart(conn)
        for request in owed:
            await self._write(_encode(restarted_reply(request, why)))

    async def _restart(self, dead: _Conn) -> None:
        for attempt in range(1, _MAX_ATTEMPTS + 1):
            try:
                self._conn = await self._attach(dead.root, replay=True)
            except LinkClosed as exc:
                logger.warning("restarting the host failed (attempt %d): %s", attempt, exc)
                continue
            self.restarts += 1
            logger.warning("the habitat host was restarted (restart %d)", self.restarts)
            return
        raise LinkClosed(f"the habitat host of {dead.root} keeps failing to start")

    async def _maybe_move(self, msg: Message, line: bytes) -> bytes | None:
        """`project_open` outside the workspace: move there first. Returns the line to send
        (a relative path made absolute: the host's cwd is not the client's), None when it
        was answered here (the move failed)."""
        params = msg.get("params")
        if msg.get("method") != "tools/call" or not isinstance(params, dict):
            return line
        arguments = params.get("arguments")
        if params.get("name") != "project_open" or not isinstance(arguments, dict):
            return line
        path = arguments.get("path")
        if not isinstance(path, str) or not path:
            return line
        target = _existing_dir(path)
        if target is None:
            return line  # the host says what is wrong with it
        line = _encode(
            {**msg, "params": {**params, "arguments": {**arguments, "path": str(target)}}}
        )
        old = self._conn
        assert old is not None
        if target == old.root or old.root in target.parents or not _is_project(target):
            return line  # not a project: the host refuses it, naming the fix; no host starts
        root = scm_root(target) or target
        try:
            new = await self._attach(root, replay=True)
        except (HabitatError, LinkClosed) as exc:
            why = f"project_open: could not move the session to the host of {root}: {exc}"
            await self._write(_encode(restarted_reply(msg, why)))
            return None
        old.leaving = True
        self._conn = new
        logger.info("session moved from %s to %s", old.root, root)
        if not old.pending:
            await old.link.aclose()  # its reader ends; `_settle` finds nothing owed
        if self._initialize is not None:
            await self._write(_LIST_CHANGED)  # the new host's tools may differ
        return line
