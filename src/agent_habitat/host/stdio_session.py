"""One MCP stdio session on a client's stdin and stdout that its bridge handed over.

The same server and screen as `habitat mcp --embedded` on its own stdio (`mcp_tools/stdio`)
and as the line exchange (`mcp_stream`): each line screened, a good one passed to the SDK
as the message the screen parsed, each line delivered whole as it is sent, through the
bridge's outbox (`stdio_outbox.py`). Around that, the notes the bridge keeps its books by
(`reach/handoff.py`): each read from stdin (`INPUT`, before any of it is taken), each
answer in the outbox (`ANSWERED`; `PART` ... `WHOLE` for a line longer than it). A
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
import time
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
        self._fd = -1

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self._fd = transport.get_extra_info("socket").fileno()

    def data_received(self, data: bytes) -> None:
        pass  # the bridge says nothing after its hello

    def eof_received(self) -> bool | None:
        self.gone.set()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.gone.set()

    def note(self, kind: bytes, payload: bytes = b"") -> bool:
        """Whether the note is in the socket (False: the bridge is gone, or reads nothing)."""
        if self.gone.is_set() or self.transport is None or self.transport.is_closing():
            return False
        data = memoryview(wire.frame(kind, payload))
        deadline = None
        while data:
            try:
                data = data[os.write(self._fd, data) :]
            except BlockingIOError:
                self.poke(wire.DRAIN)
                deadline = deadline or time.monotonic() + NOTE_SECONDS
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([], [self._fd], [], left)[1]:
                    self.gone.set()  # a bridge that reads nothing: the session ends
                    return False
            except OSError:
                self.gone.set()
                return False
        return True

    def note_now(self, kind: bytes, payload: bytes = b"") -> None:
        self.note(kind, payload)
        self.poke(wire.NOW)

    def poke(self, word: bytes) -> None:
        if self.urgent is not None:
            with contextlib.suppress(OSError):  # full (it was told already) or gone
                self.urgent.send(word, socket.MSG_DONTWAIT)


class _Intake(asyncio.Protocol):
    """stdin's bytes as they come, noted to the bridge before any of them is taken."""

    def __init__(self, control: _Control, prefix: bytes) -> None:
        self.control = control
        self.buffer = bytearray(prefix)
        self.eof = False
        self.transport: asyncio.ReadTransport | None = None
        self._paused = False
        self._waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.control.note(wire.INPUT, data)
        self.buffer += data
        if len(self.buffer) > _PAUSE_BYTES and self.transport is not None:
            self.transport.pause_reading()
            self._paused = True
        self._wake()

    def eof_received(self) -> bool | None:
        self.eof = True
        self._wake()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
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
                if self._paused and len(self.buffer) < _PAUSE_BYTES and self.transport:
                    self.transport.resume_reading()
                    self._paused = False
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
        if self.transport is not None:
            self.transport.close()


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
    stdin_fd, stdout_fd, urgent_fd, outbox_r, outbox_w = hello.fds
    hello.fds = []  # the transports own them now
    control.urgent = socket.socket(fileno=urgent_fd)
    pipe_in = os.fdopen(stdin_fd, "rb", 0)
    outbox = Outbox(stdout_fd, outbox_r, outbox_w, control.note)
    intake = _Intake(control, hello.prefix)
    # First: every note after it (stdin's bytes come as soon as its pipe is watched).
    control.note(wire.OK, json.dumps({"pid": os.getpid()}).encode())
    try:
        await loop.connect_read_pipe(lambda: intake, pipe_in)
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
        if intake.transport is None:
            with contextlib.suppress(OSError):
                pipe_in.close()
        if control.transport is not None:
            control.transport.close()
        control.urgent.close()
