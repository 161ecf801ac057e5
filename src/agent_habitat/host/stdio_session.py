"""One MCP stdio session on a client's stdin and stdout that its bridge handed over.

The same server and screen as `habitat mcp --embedded` on its own stdio (`mcp_tools/stdio`)
and as the line exchange (`mcp_stream`): each line screened, a good one passed to the SDK
as the message the screen parsed, each line delivered whole as it is sent, through the
bridge's outbox (`stdio_outbox.py`). Around that, the notes the bridge keeps its books by
(`reach/handoff.py`): stdin's bytes, each taken only once it is in an `INPUT` frame
through the bridge's inbox (`stdio_intake.py`), each answer in the outbox (`ANSWERED`;
`PART` ... `WHOLE` for a line longer than it). A
replayed handshake (the bridge's client already has its answer) goes first and its answer
is dropped. A `project_open` that moves the session to another workspace
(`reach.bridge.project_open_plan`, with the client's cwd) is handed back (`MOVED`): stdin
is read no more, and what the session still owes goes to the bridge as `LINE`s until
nothing is owed. The bridge hanging up ends the session at once.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import select
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import anyio
import mcp.types as types
from mcp.shared.message import SessionMessage

from agent_habitat.mcp_tools import HabitatServer
from agent_habitat.mcp_tools.stdio import ClosedOnExit, screen
from agent_habitat.reach import handoff as wire
from agent_habitat.reach.bridge import project_open_plan
from agent_habitat.verify.runner.slot import REACHED_THROUGH

from .mcp_stream import BRIDGE
from .stdio_intake import Gone, Inbox
from .stdio_outbox import Outbox

if TYPE_CHECKING:
    from .stdio_handoff import Hello

__all__ = ["serve_session"]

NOTE_SECONDS = 10.0
"""How long a note may wait for the bridge to make room for it."""
# Past this much unread, stdin is paused until the server has taken some (as a pipe's
# reader would be: the client's writes wait).
_PAUSE_BYTES = 16 * 1024 * 1024


class _Control(asyncio.Protocol):
    """The bridge's connection: notes out; its end is the session's. Each note is in the
    socket before the host goes on (a note in this process's memory would die with it):
    when the socket is full the bridge is poked to read it (`DRAIN` on its urgent socket)
    and the host waits until it has (at most `NOTE_SECONDS`, then the session ends). A note
    the bridge must read now (`MOVED`, `END`) is followed by `NOW`: it reads the others
    when it likes (`reach.handoff.Handoff.watch`)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.gone = asyncio.Event()
        self.urgent: socket.socket | None = None
        self.fd = -1

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.fd = transport.get_extra_info("socket").fileno()

    def data_received(self, data: bytes) -> None:
        pass  # the bridge says nothing after its hello

    def eof_received(self) -> bool | None:
        self.gone.set()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.gone.set()

    def note(self, kind: bytes, payload: bytes = b"") -> bool:
        """Whether the note is in the socket (False: the bridge is gone, or reads nothing)."""
        return self.send(wire.frame(kind, payload))

    def send(self, raw: bytes) -> bool:
        """Whether `raw` (a frame, or a frame's head) is in the socket."""
        if self.gone.is_set() or self.transport is None or self.transport.is_closing():
            return False
        data = memoryview(raw)
        while data:
            try:
                data = data[os.write(self.fd, data) :]
            except BlockingIOError:
                if not self.room():
                    return False
            except OSError:
                self.gone.set()
                return False
        return True

    def room(self) -> bool:
        """Wait until the socket has room (the bridge poked to read it); False when the
        bridge reads nothing for `NOTE_SECONDS` (the session ends)."""
        self.poke(wire.DRAIN)
        try:
            ready = select.select([], [self.fd], [], NOTE_SECONDS)[1]
        except (OSError, ValueError):
            ready = []
        if not ready:
            self.gone.set()  # a bridge that reads nothing: the session ends
            return False
        return True

    def note_now(self, kind: bytes, payload: bytes = b"") -> None:
        self.note(kind, payload)
        self.poke(wire.NOW)

    def poke(self, word: bytes) -> None:
        if self.urgent is not None:
            with contextlib.suppress(OSError):  # full (it was told already) or gone
                self.urgent.send(word, socket.MSG_DONTWAIT)


class _Intake:
    """stdin's bytes as they come, each taken through the bridge's inbox (`stdio_intake`)."""

    def __init__(self, control: _Control, inbox: Inbox, prefix: bytes) -> None:
        self.control = control
        self.inbox = inbox
        self.buffer = bytearray(prefix)
        self.eof = False
        self._fd = -1
        self._watched = False
        self._waiter: asyncio.Future[None] | None = None

    def watch(self, stdin: int) -> None:
        self._fd = stdin
        self._resume()

    def _resume(self) -> None:
        if not self._watched and not self.eof and not self.inbox.closed:
            asyncio.get_running_loop().add_reader(self._fd, self._readable)
            self._watched = True

    def _pause(self) -> None:
        if self._watched:
            asyncio.get_running_loop().remove_reader(self._fd)
            self._watched = False

    def _readable(self) -> None:
        try:
            data = self.inbox.take()
        except Gone:
            self.control.gone.set()
            data = None
        if data is None:
            self.eof = True
            self._pause()
        elif data:
            self.buffer += data
            if len(self.buffer) > _PAUSE_BYTES:
                self._pause()
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def line(self) -> bytes | None:
        """The next raw line (its newline cut), None at stdin's end."""
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                if len(self.buffer) < _PAUSE_BYTES:
                    self._resume()
                return line
            if self.eof:
                if not self.buffer:
                    return None
                line = bytes(self.buffer)
                self.buffer.clear()
                return line
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter

    def close(self) -> None:
        """stdin is watched no more, and this process's copies are closed."""
        self._pause()
        self.eof = True
        self.inbox.close()
        self._wake()


def _key(request_id: Any) -> str:
    return json.dumps(request_id)


class _Session:
    def __init__(self, control: _Control, root: Path, cwd: Path) -> None:
        self.control = control
        self.root = root
        self.cwd = cwd
        self.owed: set[str] = set()
        self.moved = False
        self.released = asyncio.Event()
        self.ended_by_client = False

    def answered(self, key: str) -> None:
        self.owed.discard(key)
        if self.moved and not self.owed:
            self.released.set()


class _Answers(ClosedOnExit):
    """The SDK's write stream: each message delivered whole through the outbox, noted."""

    def __init__(self, session: _Session, outbox: Outbox, swallow: str | None):
        self._session = session
        self._outbox = outbox
        self._swallow = swallow
        self._lock = asyncio.Lock()
        self._closed = False

    async def send(self, item: SessionMessage, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        message = item.message
        key = None
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            key = _key(message.id)
            if key == self._swallow:
                self._swallow = None  # the replayed handshake's: the client has it
                return
        await self.write(message.model_dump_json(by_alias=True, exclude_unset=True), key)

    async def write(self, text: str, key: str | None) -> None:
        data = text.encode() + b"\n"
        session = self._session
        async with self._lock:
            if session.moved:
                session.control.note(wire.LINE, data)
            elif session.control.gone.is_set():
                # The bridge takes the host for gone: a line now could be answered twice.
                raise anyio.BrokenResourceError
            else:
                await self._outbox.put(data, None if key is None else key.encode())
        if key is not None:
            session.answered(key)

    async def move(self) -> None:
        """Write stdout no more: what is left goes to the bridge (after all written)."""
        async with self._lock:
            with contextlib.suppress(anyio.BrokenResourceError):
                await self._outbox.flush()
            self._session.moved = True
            self._outbox.close()

    async def aclose(self) -> None:
        self._closed = True


class _Requests(ClosedOnExit):
    """The SDK's read stream: the replayed handshake, then stdin's lines, screened."""

    def __init__(
        self,
        session: _Session,
        intake: _Intake,
        answers: _Answers,
        first: list[types.JSONRPCMessage],
    ) -> None:
        self._session = session
        self._intake = intake
        self._answers = answers
        self._ready: collections.deque[str] = collections.deque()
        self._first = collections.deque(first)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def _text(self) -> str | None:
        while not self._ready:
            raw = await self._intake.line()
            if raw is None:
                return None
            # Decoded as the SDK's reader does (UTF-8, bad bytes replaced, universal newlines).
            text = raw.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
            self._ready.extend(part for part in text.split("\n"))
        return self._ready.popleft()

    async def receive(self) -> SessionMessage | Exception:
        session = self._session
        if self._first:
            return SessionMessage(self._first.popleft())
        while True:
            text = await self._text()
            if text is None:
                session.ended_by_client = True
                raise anyio.EndOfStream
            verdict = screen(text)
            message = verdict.message
            if message is None:
                if verdict.reply is not None:
                    reply_id = json.loads(verdict.reply).get("id")
                    await self._answers.write(verdict.reply, _key(reply_id))
                continue
            if isinstance(message, types.JSONRPCRequest):
                if message.method == "tools/call" and "project_open" in text:
                    message = await self._maybe_move(text, message)
                session.owed.add(_key(message.id))
            elif (
                isinstance(message, types.JSONRPCNotification)
                and message.method == "notifications/cancelled"
                and isinstance(message.params, dict)
                and "requestId" in message.params
            ):
                session.answered(_key(message.params["requestId"]))
            return SessionMessage(message)

    async def _maybe_move(self, text: str, message: types.JSONRPCRequest) -> types.JSONRPCRequest:
        session = self._session
        plan = project_open_plan(json.loads(text), session.root, session.cwd)
        if plan is None:
            return message
        rewritten, root = plan
        if root is None:  # stays: the path made absolute (the host's cwd is not the client's)
            again = screen(json.dumps(rewritten, ensure_ascii=False)).message
            return again if isinstance(again, types.JSONRPCRequest) else message
        # Another workspace's: the bridge moves the session there, from this line on.
        await self._answers.move()
        self._intake.close()
        rest = "".join(part + "\n" for part in self._ready)
        self._ready.clear()
        back = (text + "\n" + rest).encode() + bytes(self._intake.buffer)
        session.control.note_now(wire.MOVED, back)
        if not session.owed:
            session.released.set()
        await session.released.wait()
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        self._intake.close()


def _first(fields: dict[str, Any]) -> tuple[list[types.JSONRPCMessage], str | None]:
    """The handshake a bridge replays (its client's, under an id of the bridge's own)."""
    replay = fields.get("replay")
    if not isinstance(replay, dict):
        return [], None
    messages: list[types.JSONRPCMessage] = []
    initialize = screen(json.dumps(replay, ensure_ascii=False)).message
    if not isinstance(initialize, types.JSONRPCRequest):
        return [], None
    messages.append(initialize)
    if fields.get("initialized") is True:
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        if (initialized := screen(json.dumps(done)).message) is not None:
            messages.append(initialized)
    return messages, _key(initialize.id)


async def serve_session(
    conn: socket.socket, hello: Hello, server: HabitatServer, root: Path
) -> None:
    """Serve the client on `hello`'s stdin and stdout until it closes stdin, its bridge
    hangs up, or the session moves and owes nothing more; the descriptors are closed."""
    loop = asyncio.get_running_loop()
    _, control = await loop.connect_accepted_socket(_Control, conn)
    stdin_fd, stdout_fd, urgent_fd, outbox_r, outbox_w, inbox_r, inbox_w = hello.fds
    hello.fds = []  # the session owns them now
    control.urgent = socket.socket(fileno=urgent_fd)
    outbox = Outbox(stdout_fd, outbox_r, outbox_w, control.note)
    inbox = Inbox(stdin_fd, inbox_r, inbox_w, control.fd, control.send, control.room)
    intake = _Intake(control, inbox, hello.prefix)
    # First: every note after it.
    control.note(wire.OK, json.dumps({"pid": os.getpid()}).encode())
    try:
        intake.watch(stdin_fd)
        session = _Session(control, root, Path(hello.fields["cwd"]))
        first, swallow = _first(hello.fields)
        answers = _Answers(session, outbox, swallow)
        requests = _Requests(session, intake, answers, first)
        token = REACHED_THROUGH.set(BRIDGE)
        try:
            async with anyio.create_task_group() as tg:

                async def bridge_gone() -> None:
                    await control.gone.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(bridge_gone)
                await server.run(requests, answers, server.create_initialization_options())
                tg.cancel_scope.cancel()
        finally:
            REACHED_THROUGH.reset(token)
        if session.ended_by_client or session.moved:
            control.note_now(wire.END)
    finally:
        intake.close()
        outbox.close()
        if control.transport is not None:
            control.transport.close()
        control.urgent.close()
