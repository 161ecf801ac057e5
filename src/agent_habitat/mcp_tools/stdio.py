"""The stdio transport with a screen in front of the SDK's reader: every request with an id
gets an answer.

The SDK's stdio reader (mcp 2.3.0) drops a line it cannot validate and reads a request whose
id is not a string or an integer (`1.5`, `true`, `null`) as a notification, which is never
answered: a client that sent one waits forever. The screen reads each line first; a line the
SDK would drop or misread is answered here with the JSON-RPC error the spec asks for (parse
error, invalid request) and the request's own id, and not passed on. Good lines go through
unchanged, so the SDK still does all the rest (framing, writing, the claim of stdout).
"""

from __future__ import annotations

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
from typing import TYPE_CHECKING, Any, NamedTuple, Self, cast

import anyio
import mcp.types as types
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

if TYPE_CHECKING:
    from types import TracebackType

    from .handshake import Handshake

__all__ = ["Verdict", "guarded_stdio", "screen"]

logger = logging.getLogger(__name__)

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class Verdict(NamedTuple):
    forward: bool
    """Pass the line on to the SDK."""
    reply: str | None = None
    """The error response to write back instead, if any (a bad notification gets none)."""


_FORWARD = Verdict(True)


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
        parsed = json.loads(line)
    except (ValueError, RecursionError) as exc:
        return _reply(None, types.PARSE_ERROR, f"Parse error: {exc}")
    has_id = isinstance(parsed, dict) and "id" in parsed
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        if has_id:
            return _reply(parsed["id"], types.INVALID_REQUEST, _problem(parsed, exc))
        if isinstance(parsed, dict) and "method" in parsed:
            logger.warning("dropped a malformed notification: %s", _problem(parsed, exc))
            return Verdict(False)  # a notification is never answered, not even an error
        return _reply(None, types.INVALID_REQUEST, _problem(parsed, exc))
    if has_id and isinstance(message, types.JSONRPCNotification):
        return _reply(
            parsed["id"],
            types.INVALID_REQUEST,
            f"Invalid request: `id` must be a string or an integer, not {parsed['id']!r}",
        )
    return _FORWARD


class _RawMessage:
    """An already-serialized line, sent through the SDK's writer like its own messages (the
    writer only calls `model_dump_json`), so the two never tear each other's frames. A real
    `JSONRPCError` cannot carry an id such as 1.5, which the client is waiting on."""

    def __init__(self, text: str) -> None:
        self.text = text

    def model_dump_json(self, **_: Any) -> str:
        return self.text


class _Screened:
    """The lines of stdin the SDK should see; answers the others itself."""

    def __init__(self, stdin: anyio.AsyncFile[str]) -> None:
        self._stdin = stdin
        self._ready = anyio.Event()
        self._write: WriteStream[SessionMessage] | None = None

    def answer_through(self, write: WriteStream[SessionMessage]) -> None:
        self._write = write
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._stdin:
            verdict = screen(line)
            if verdict.forward:
                yield line
            elif verdict.reply is not None:
                await self._ready.wait()
                assert self._write is not None
                raw = cast(Any, _RawMessage(verdict.reply))
                await self._write.send(SessionMessage(raw))


class _Deduplicated:
    """The SDK's write stream, less its answer to an `initialize` the handshake answered."""

    def __init__(self, inner: WriteStream[SessionMessage], handshake: Handshake) -> None:
        self._inner = inner
        self._handshake = handshake

    async def send(self, item: SessionMessage, /) -> None:
        if not self._handshake.already_answered(item.message):
            await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

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


@asynccontextmanager
async def guarded_stdio(
    handshake: Handshake | None = None,
) -> AsyncIterator[tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]]:
    """`mcp.server.stdio.stdio_server` with the screen in front of its reader.

    The SDK claims fd 0 only when it opens stdin itself, so this does it the same way: the
    wire moves to a private descriptor and fd 0 points at the null device, so a child that
    reads stdin reads EOF instead of the client's messages. With a `handshake` (started
    before the SDK was imported), the lines it read come first and the SDK's answer to the
    `initialize` it already answered is not sent again. A pipe or socket (what a client
    gives) is read and written on the event loop (`_LoopLines`, `_LoopWriter`); anything
    else through the SDK's files, a worker thread for each read and write.
    """
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    async with AsyncExitStack() as stack:
        stack.callback(os.dup2, wire, 0)
        stdin: Any
        if _pollable(wire):
            stdin = _LoopLines(wire, handshake)
        else:
            binary: Any = (
                os.fdopen(wire, "rb", closefd=False)
                if handshake is None
                else BufferedReader(handshake.reader(wire))
            )
            stdin = anyio.wrap_file(TextIOWrapper(binary, encoding="utf-8", errors="replace"))
        stdout = await _loop_stdout(stack)
        screened = _Screened(stdin)
        read_stream, write_stream = await stack.enter_async_context(
            stdio_server(stdin=cast(Any, screened), stdout=cast(Any, stdout))
        )
        screened.answer_through(write_stream)
        if handshake is None:
            yield read_stream, write_stream
        else:
            yield read_stream, _Deduplicated(write_stream, handshake)


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
    """The SDK's stdout, written through asyncio's pipe transport: at once when the pipe
    has room (`anyio.wrap_file` takes a worker thread for each write and each flush)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


async def _loop_stdout(stack: AsyncExitStack) -> _LoopWriter | None:
    """Claim fd 1 as the SDK would (the wire moves to a private descriptor, fd 1 points at
    stderr, so a stray print misses the wire) and write the wire on the event loop; None
    when fd 1 is no pipe or socket (the SDK claims it and writes it in worker threads)."""
    if not _pollable(1):
        return None
    wire = os.dup(1)  # never closed: a write the transport still holds goes to the wire
    os.dup2(2, 1)
    stack.callback(os.dup2, wire, 1)
    loop = asyncio.get_running_loop()
    pipe = os.fdopen(wire, "wb", 0, closefd=False)
    transport, flow = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
    transport.set_write_buffer_limits(high=0)  # a flush waits until all of it is written
    stack.callback(transport.close)
    return _LoopWriter(asyncio.StreamWriter(transport, flow, None, loop))
