"""`HostClient` over a kept-alive connection the server drops between calls.

uvicorn closes a connection idle for its keep-alive time; a request sent as it does so is
read and never answered ("server disconnected without sending a response"), seen at load 30
in `bench/latency/scene_host_load.py`. A call that may safely happen twice (a read-only or
idempotent verb) is sent again on a fresh connection; a run is never sent twice. The server
here is a real unix socket that does what uvicorn did: it answers the first request on a
connection, then reads the next one and hangs up.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agent_habitat.errors import HabitatError
from agent_habitat.reach.client import HostClient
from agent_habitat.reach.lock import HostRecord
from agent_habitat.shell.models import LastArgs, RunArgs, SceneResult
from agent_habitat.verbs import SceneArgs, verb

BOUND = 30.0  # a hang guard, not a speed bound

_SCENE = SceneResult.model_validate(
    {
        "tabs": [],
        "caps": {"max_tabs": 1, "history_rows": 1, "output_cap_bytes": 1, "preview_bytes": 1},
    }
).model_dump_json()


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(1 << 16)
        if not piece:
            return b""
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if b"content-length" in line.lower()
        ),
        0,
    )
    while len(body) < length:
        body += conn.recv(1 << 16)
    return head.split(b"\r\n")[0]


class DroppingHost:
    """Answers each connection's first request (kept alive), then reads its second one and
    closes without a word; `requests` is every request line it read, in order."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.requests: list[str] = []
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        self._listener.listen(8)
        self._listener.settimeout(BOUND)
        self._threads: list[threading.Thread] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(BOUND)
            line = _read_request(conn)
            self.requests.append(line.decode())
            status, text = self._answer(line)
            body = text.encode()
            conn.sendall(
                b"HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (status, len(body), body)
            )
            line = _read_request(conn)  # the next call on the kept connection …
            if line:
                self.requests.append(line.decode())
            # … is dropped unanswered, as uvicorn's keep-alive timeout does

    @staticmethod
    def _answer(line: bytes) -> tuple[bytes, str]:
        if b"shell_scene" in line:
            return b"200 OK", _SCENE
        return b"404 Not Found", json.dumps({"error": "not served here", "field": None})

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        for thread in self._threads:
            thread.join(BOUND)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[DroppingHost]:
    server = DroppingHost(tmp_path / "host.sock")
    yield server
    server.close()


def _record(host: DroppingHost) -> HostRecord:
    return HostRecord(pid=1, started_at=0.0, socket=str(host.path))


def test_a_read_only_call_on_a_dropped_connection_is_sent_again_and_answered(
    host: DroppingHost,
) -> None:
    async def main() -> None:
        with anyio.fail_after(BOUND):
            async with HostClient(_record(host)) as client:
                scene = verb("scene", "shell")
                await client.call(scene, SceneArgs())
                # The connection is kept; the server reads this call on it and hangs up.
                again = await client.call(scene, SceneArgs())
                assert isinstance(again, SceneResult)

    anyio.run(main)
    scenes = [r for r in host.requests if "shell_scene" in r]
    assert len(scenes) == 3, host.requests  # answered, dropped, answered on a new connection


def test_a_run_on_a_dropped_connection_is_never_sent_twice(host: DroppingHost) -> None:
    async def main() -> None:
        with anyio.fail_after(BOUND):
            async with HostClient(_record(host)) as client:
                await client.call(verb("scene", "shell"), SceneArgs())
                with pytest.raises(HabitatError, match="did not answer shell_run"):
                    await client.call(verb("run", "shell"), RunArgs(command="echo once"))

    anyio.run(main)
    runs = [r for r in host.requests if "shell_run" in r]
    assert runs == ["POST /api/shell_run HTTP/1.1"], host.requests


def test_a_read_only_call_is_sent_again_only_once_per_dropped_connection(
    host: DroppingHost,
) -> None:
    """`shell_last` on a tab this server does not know: the second answer is its refusal,
    not another retry, so a refusal is never mistaken for a dropped connection."""

    async def main() -> None:
        with anyio.fail_after(BOUND):
            async with HostClient(_record(host)) as client:
                last = verb("last", "shell")
                await client.call(verb("scene", "shell"), SceneArgs())
                with pytest.raises(HabitatError, match="not served here"):
                    await client.call(last, LastArgs(tab="t"))

    anyio.run(main)
    lasts = [r for r in host.requests if "shell_last" in r]
    assert len(lasts) == 2, host.requests
