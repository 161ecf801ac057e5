"""The stdio transport: every request with an id gets an answer, and each line is parsed once.

The SDK's stdio reader (mcp 2.3.0) drops a line it cannot validate and reads a request whose
id is not a string or an integer (`1.5`, `true`, `null`) as a notification, which is never
answered: a client that sent one waits forever. The screen reads each line first; a line the
SDK would drop or misread is answered here with the JSON-RPC error the spec asks for (parse
error, invalid request) and the request's own id, and not passed on. A good line is handed to
the SDK's dispatcher as the message the screen parsed (`Server.run` takes any pair of
streams), read in the dispatcher's own task, and its answers are written as they are sent:
the SDK's `stdio_server` parses each line again and passes every message through a memory
stream and a task of its own each way (0.2-0.3 ms of the event loop's CPU a call, and two
more turns of the loop, at load 13). Framing, writing and the claim of stdin and stdout are
as the SDK's.
"""

from __future__ import annotations

import abc
import asyncio
import json
import logging
import math
import os
import re
import stat
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from io import BufferedReader, TextIOWrapper
from typing import TYPE_CHECKING, Any, NamedTuple, Self

import anyio
import mcp.types as types
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

if TYPE_CHECKING:
    from types import TracebackType

    from .handshake import Handshake

__all__ = ["ClosedOnExit", "Verdict", "guarded_stdio", "screen"]

logger = logging.getLogger(__name__)

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class Verdict(NamedTuple):
    forward: bool
    """Pass the line on to the SDK."""
    reply: str | None = None
    """The error response to write back instead, if any (a bad notification gets none)."""
    message: types.JSONRPCMessage | None = None
    """The line as the SDK reads it, when it is passed on: parsed here, once."""


def _reply(request_id: Any, code: int, message: str) -> Verdict:
    if isinstance(request_id, float) and not math.isfinite(request_id):
        request_id = None  # NaN and infinity have no JSON form to echo
    # ensure_ascii: the id or the message may hold a lone surrogate; escaped it is valid JSON.
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return Verdict(False, json.dumps(error, separators=(",", ":")))


def _lone_surrogate(value: Any) -> str | None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if found := _LONE_SURROGATE.search(item):
                return found.group(0)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _problem(message: Any, exc: ValidationError) -> str:
    """What is wrong with a parsed line the SDK refused, in the client's terms."""
    if not isinstance(message, dict):
        return "Invalid request: a message must be one JSON object (batches are not supported)"
    if (surrogate := _lone_surrogate(message)) is not None:
        return (
            f"Invalid request: a string holds a lone surrogate ({surrogate!r}); "
            "JSON strings must be valid Unicode"
        )
    if message.get("jsonrpc") != "2.0":
        return 'Invalid request: `jsonrpc` must be "2.0"'
    if "method" not in message and "result" not in message and "error" not in message:
        return "Invalid request: `method` is missing"
    if "method" in message and not isinstance(message["method"], str):
        return "Invalid request: `method` must be a string"
    if "params" in message and not isinstance(message["params"], dict):
        return "Invalid request: `params` must be an object"
    first = exc.errors()[0] if exc.errors() else None
    where = ".".join(str(p) for p in first["loc"][1:]) if first else ""
    return f"Invalid request: {where or 'message'}: {first['msg'] if first else exc}"


def screen(line: str) -> Verdict:
    """What to do with one line from the client."""
    if not line.strip():
        return Verdict(False)
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return _refused(line, exc)
    if isinstance(message, types.JSONRPCNotification):
        # A request whose id the SDK cannot take (1.5, true, null) validates as a notification.
        parsed = json.loads(line)
        if isinstance(parsed, dict) and "id" in parsed:
            return _reply(
                parsed["id"],
                types.INVALID_REQUEST,
                f"Invalid request: `id` must be a string or an integer, not {parsed['id']!r}",
            )
    return Verdict(True, message=message)


def _refused(line: str, exc: ValidationError) -> Verdict:
    """A line the SDK cannot read: the error to answer, with its id when it has one."""
    try:
        parsed = json.loads(line)
    except (ValueError, RecursionError) as error:
        return _reply(None, types.PARSE_ERROR, f"Parse error: {error}")
    if isinstance(parsed, dict) and "id" in parsed:
        return _reply(parsed["id"], types.INVALID_REQUEST, _problem(parsed, exc))
    if isinstance(parsed, dict) and "method" in parsed:
        logger.warning("dropped a malformed notification: %s", _problem(parsed, exc))
        return Verdict(False)  # a notification is never answered, not even an error
    return _reply(None, types.INVALID_REQUEST, _problem(parsed, exc))


class ClosedOnExit(abc.ABC):
    """A stream the SDK enters as a context: leaving it is `aclose` (the SDK's memory
    streams' shape, which the stdio streams here and the host's handed ones share)."""

    @abc.abstractmethod
    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class _Answers(ClosedOnExit):
    """The write stream the SDK's dispatcher sends to: each message serialized as the SDK's
    writer does and written at once, in the sending task (a write to the pipe is one call,
    so two messages never tear each other's frames). Less the SDK's answer to an
    `initialize` the handshake answered already."""

    def __init__(self, out: _LoopWriter | _FileWriter, handshake: Handshake | None) -> None:
        self._out = out
        self._handshake = handshake
        self._closed = False

    async def send(self, item: SessionMessage, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._handshake is not None and self._handshake.already_answered(item.message):
            return
        await self.send_line(item.message.model_dump_json(by_alias=True, exclude_unset=True))

    async def send_line(self, text: str) -> None:
        """One serialized message (a screen's reply is one the SDK's models cannot hold: a
        `JSONRPCError` cannot carry an id such as 1.5, which the client is waiting on)."""
        try:
            await self._out.write_line(text + "\n")
        except (OSError, RuntimeError) as exc:  # the client is gone: as a closed stream says
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        self._closed = True


class _Requests(ClosedOnExit):
    """The read stream the SDK's dispatcher reads, in its own task: each line of stdin
    screened, a good one as the message the screen parsed, a bad one answered here."""

    def __init__(self, lines: AsyncIterator[str], answers: _Answers) -> None:
        self._lines = lines
        self._answers = answers

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        while True:
            verdict = screen(await anext(self._lines))
            if verdict.message is not None:
                return SessionMessage(verdict.message)
            if verdict.reply is not None:
                await self._answers.send_line(verdict.reply)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self.__anext__()
        except StopAsyncIteration:
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        closing = getattr(self._lines, "aclose", None)
        if closing is not None:
            await closing()


@asynccontextmanager
async def guarded_stdio(
    handshake: Handshake | None = None,
) -> AsyncIterator[tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]]:
    """The server's streams over stdin and stdout, screened (`_Requests`, `_Answers`).

    The wire moves to private descriptors as the SDK's `stdio_server` moves it: fd 0 points
    at the null device, so a child that reads stdin reads EOF instead of the client's
    messages, and fd 1 at stderr, so a stray print misses the wire; both come back on exit.
    With a `handshake` (started before the SDK was imported), the lines it read come first
    and the SDK's answer to the `initialize` it already answered is not sent again. A pipe
    or socket (what a client gives) is read and written on the event loop (`_LoopLines`,
    `_LoopWriter`); anything else through worker threads, one for each read and write.
    """
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    async with AsyncExitStack() as stack:
        stack.callback(os.dup2, wire, 0)
        lines: AsyncIterator[str]
        if _pollable(wire):
            lines = aiter(_LoopLines(wire, handshake))
        else:
            binary: Any = (
                os.fdopen(wire, "rb", closefd=False)
                if handshake is None
                else BufferedReader(handshake.reader(wire))
            )
            text = TextIOWrapper(binary, encoding="utf-8", errors="replace")
            lines = aiter(anyio.wrap_file(text))
        answers = _Answers(await _stdout(stack), handshake)
        yield _Requests(lines, answers), answers


def _pollable(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


# As long as a message may be: the reader pauses the pipe past twice this much unread.
_LINE_LIMIT = 1 << 30


class _LoopLines:
    """The client's lines, read on the event loop through asyncio's pipe transport:
    `anyio.wrap_file` takes a worker thread for every line, a hop in each request. Decoded
    as the SDK's reader does (UTF-8, bad bytes replaced, universal newlines)."""

    def __init__(self, wire: int, handshake: Handshake | None) -> None:
        self._wire = wire
        self._handshake = handshake

    async def __aiter__(self) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_LINE_LIMIT, loop=loop)
        if self._handshake is not None:
            # What its thread read off the wire first (waits for that thread to finish).
            reader.feed_data(await anyio.to_thread.run_sync(self._handshake.received))
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
            os.fdopen(self._wire, "rb", 0, closefd=False),
        )
        try:
            while line := await reader.readline():
                text = line.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
                *whole, rest = text.split("\n")
                for part in whole:
                    yield part + "\n"
                if rest:
                    yield rest  # the last line, without its newline
        finally:
            transport.close()


class _LoopWriter:
    """Stdout written through asyncio's pipe transport: at once when the pipe has room."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write_line(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))
        await self._writer.drain()  # the write buffer's limit is 0: until all of it is written


class _FileWriter:
    """Stdout that is no pipe or socket (a file), written in a worker thread, one line at
    a time (a text file is not safe to write from two threads at once)."""

    def __init__(self, out: anyio.AsyncFile[str]) -> None:
        self._out = out
        self._lock = anyio.Lock()

    async def write_line(self, text: str) -> None:
        async with self._lock:
            await self._out.write(text)
            await self._out.flush()


async def _stdout(stack: AsyncExitStack) -> _LoopWriter | _FileWriter:
    """Claim fd 1 as the SDK would (the wire moves to a private descriptor, fd 1 points at
    stderr) and write the wire on the event loop when it is a pipe or socket."""
    wire = os.dup(1)  # never closed: a write the transport still holds goes to the wire
    os.dup2(2, 1)
    stack.callback(os.dup2, wire, 1)
    if not _pollable(wire):
        binary = os.fdopen(wire, "wb", closefd=False)
        return _FileWriter(anyio.wrap_file(TextIOWrapper(binary, encoding="utf-8")))
    loop = asyncio.get_running_loop()
    pipe = os.fdopen(wire, "wb", 0, closefd=False)
    transport, flow = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
    transport.set_write_buffer_limits(high=0)  # a drain waits until all of it is written
    stack.callback(transport.close)
    return _LoopWriter(asyncio.StreamWriter(transport, flow, None, loop))
