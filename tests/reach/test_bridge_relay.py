"""The bridge's books with fake hosts at the one seam (`connect`): which request gets the
"host restarted" answer, and which is sent on to the new host."""

from __future__ import annotations

import json
import queue
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_habitat.reach.bridge import HOST_RESTARTED, Bridge, LineLink
from agent_habitat.reach.link import LinkClosed
from agent_habitat.testing import eventually

pytestmark = pytest.mark.anyio


def line(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(request_id: int) -> dict[str, Any]:
    params = {"name": "shell_run", "arguments": {"command": "true"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class FakeHost:
    """A host's end of a line exchange: answers `initialize` itself, records the rest."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.refused: list[dict[str, Any]] = []
        self.gone = False
        self._out: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

    def send_line(self, line: bytes) -> None:
        msg = json.loads(line)
        if self.gone:
            self.refused.append(msg)
            raise LinkClosed("gone")
        self.received.append(msg)
        if msg.get("method") == "initialize":
            self.answer(msg["id"])

    def answer(self, request_id: Any) -> None:
        self._out.put(line({"jsonrpc": "2.0", "id": request_id, "result": {}}))

    def lines(self) -> Iterator[bytes]:
        while (data := self._out.get()) is not None:
            yield data

    def die(self) -> None:
        """Killed: it takes no more lines, and its side of the exchange ends."""
        self.gone = True
        self._out.put(None)

    def close(self) -> None:
        self._out.put(None)

    def methods(self) -> list[tuple[Any, str | None]]:
        return [(m.get("id"), m.get("method")) for m in self.received]


class Session:
    """A bridge between a fake client (lines in, lines out) and fake hosts."""

    def __init__(self, hosts: list[FakeHost], root: Path) -> None:
        self.hosts = hosts
        self.connects = 0
        self.to_client: list[dict[str, Any]] = []
        self.bridge = Bridge(self.connect, root, self.write)
        self.bridge.start()

    def connect(self, root: Path) -> LineLink:
        host = self.hosts[self.connects]
        self.connects += 1
        return host

    def write(self, data: bytes) -> None:
        self.to_client.append(json.loads(data))

    def send(self, msg: dict[str, Any]) -> None:
        self.bridge.put(line(msg))

    def answer(self, request_id: Any) -> dict[str, Any]:
        [found] = [m for m in self.to_client if m.get("id") == request_id]
        return found


async def test_only_the_call_in_flight_gets_host_restarted_and_a_later_one_goes_on(
    tmp_path: Path,
) -> None:
    old, new = FakeHost(), FakeHost()
    session = Session([old, new], tmp_path)
    bridge = session.bridge
    session.send(INITIALIZE)
    session.send(INITIALIZED)
    session.send(call(1))
    await eventually(lambda: (1, "tools/call") in old.methods())
    old.gone = True  # dead, but its end of the exchange not yet seen closing
    session.send(call(2))  # sent after the death: the write fails, so it goes on
    await eventually(lambda: any(m.get("id") == 2 for m in old.refused))
    old.die()
    await eventually(lambda: (2, "tools/call") in new.methods())
    await eventually(lambda: any(m.get("id") == 1 for m in session.to_client))
    new.answer(2)
    await eventually(lambda: any(m.get("id") == 2 for m in session.to_client))
    bridge.close()
    in_flight = session.answer(1)
    assert in_flight["result"]["isError"] is True
    assert in_flight["result"]["content"][0]["text"] == HOST_RESTARTED
    assert session.answer(2) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    # The new host got the client's handshake again, under an id of the bridge's own, and
    # its answer was kept from the client, who has one already.
    replay_id, method = new.methods()[0]
    assert method == "initialize"
    assert replay_id != 0
    assert new.methods()[1] == (None, "notifications/initialized")
    assert [m.get("id") for m in session.to_client].count(0) == 1
    assert bridge.restarts == 1


async def test_a_cancelled_call_gets_no_answer_when_its_host_dies(tmp_path: Path) -> None:
    old, new = FakeHost(), FakeHost()
    session = Session([old, new], tmp_path)
    bridge = session.bridge
    session.send(INITIALIZE)
    session.send(INITIALIZED)
    session.send(call(1))
    cancel = {"requestId": 1, "reason": "user"}
    session.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
    await eventually(lambda: (None, "notifications/cancelled") in old.methods())
    old.die()
    session.send(call(3))
    await eventually(lambda: (3, "tools/call") in new.methods())
    bridge.close()
    assert not any(m.get("id") == 1 for m in session.to_client)
