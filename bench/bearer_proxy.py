"""A loopback HTTP/1.1 relay that adds `Authorization: Bearer TOKEN` to each request.

For conformance scenarios whose raw requests drop the URL's query (the suite's
`http-header-validation` builds them from `url.pathname` alone, so `?token=` never reaches
the host): the suite talks to this relay, which passes every byte on unchanged (Host,
header case and whitespace included) except for the one header a client that can set
headers would send. The host's token check is the same as for any client.

Requests are framed by Content-Length (what Node's `http.request` and `fetch` send for
these bodies); a chunked request is refused, since this relay would mis-frame it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

__all__ = ["bearer_proxy"]

_HEAD_LIMIT = 64 * 1024


async def _relay_requests(
    client: asyncio.StreamReader, upstream: asyncio.StreamWriter, auth: bytes
) -> None:
    while True:
        try:
            head = await client.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return
        lines = head.split(b"\r\n")
        names = {ln.split(b":", 1)[0].strip().lower(): ln for ln in lines[1:] if b":" in ln}
        if b"chunked" in names.get(b"transfer-encoding", b"").lower():
            raise ValueError("bearer_proxy cannot frame a chunked request")
        if b"authorization" not in names:
            head = lines[0] + b"\r\n" + auth + b"\r\n" + b"\r\n".join(lines[1:])
        upstream.write(head)
        length_line = names.get(b"content-length")
        length = int(length_line.split(b":", 1)[1]) if length_line else 0
        if length:
            upstream.write(await client.readexactly(length))
        await upstream.drain()


async def _relay_responses(upstream: asyncio.StreamReader, client: asyncio.StreamWriter) -> None:
    while chunk := await upstream.read(65536):
        client.write(chunk)
        await client.drain()


async def _serve(
    target_port: int, token: str, ready: asyncio.Future[int], stop: asyncio.Event
) -> None:
    auth = f"Authorization: Bearer {token}".encode()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)
        tasks = [
            asyncio.ensure_future(_relay_requests(reader, up_writer, auth)),
            asyncio.ensure_future(_relay_responses(up_reader, writer)),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            for w in (writer, up_writer):
                w.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, limit=_HEAD_LIMIT)
    ready.set_result(server.sockets[0].getsockname()[1])
    async with server:
        await stop.wait()


@contextlib.contextmanager
def bearer_proxy(target_port: int, token: str) -> Iterator[int]:
    """Run the relay in a thread while the block runs; yields its port."""
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    ready: asyncio.Future[int] = loop.create_future()
    thread = threading.Thread(
        target=loop.run_until_complete, args=(_serve(target_port, token, ready, stop),)
    )
    thread.start()
    try:
        port = asyncio.run_coroutine_threadsafe(_await(ready), loop).result(timeout=30)
        yield port
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=30)
        loop.close()


async def _await(future: asyncio.Future[int]) -> int:
    return await future
