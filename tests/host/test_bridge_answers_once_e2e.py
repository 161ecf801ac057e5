"""A host SIGKILLed while it serves a bridge's client: each request in flight gets exactly
one answer, and one the host had begun to deliver arrives whole.

The client is a real process pair: `habitat mcp` on a stdout pipe this test reads itself,
made small so that the host is stopped halfway through a long answer until the test reads
on. The test reads only until the answer's head has come, then kills the host."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_habitat.reach.bridge import HOST_RESTARTED
from agent_habitat.testing import eventually

from .test_bridge_e2e import kill_host
from .test_bridge_exit_e2e import HABITAT, INITIALIZE, SLEEP_CALL, _running

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PIPE_BYTES = 4096
# About 14 kB of output, twice in the answer (text and structured): several pipefuls.
LONG_CALL = {
    "jsonrpc": "2.0",
    "id": "long",
    "method": "tools/call",
    "params": {"name": "shell_run", "arguments": {"command": "seq 1 3000", "tab": "long"}},
}


class Stdout:
    """The bridge's stdout, read only when asked."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""

    async def read_some(self) -> None:
        await anyio.wait_readable(self.fd)
        try:
            chunk = os.read(self.fd, PIPE_BYTES)
        except BlockingIOError:
            return
        if not chunk:
            raise EOFError
        self.buf += chunk

    async def until(self, needle: bytes, *, whole: bool = True) -> None:
        """Until `needle` has come (and the rest of its line, when `whole`)."""
        with anyio.fail_after(150):  # the first answer waits for a host start
            while needle not in self.buf or (
                whole and b"\n" not in self.buf[self.buf.index(needle) :]
            ):
                await self.read_some()

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.buf.split(b"\n")[:-1]]


def _line(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg).encode() + b"\n"


async def test_a_host_killed_mid_answer_leaves_one_whole_answer_per_request(
    project: Path,
) -> None:
    out_r, out_w = os.pipe()
    fcntl.fcntl(out_w, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    os.set_blocking(out_r, False)
    process = await anyio.open_process(
        [HABITAT, "mcp", "--project", str(project)], cwd=project, stdout=out_w, stderr=None
    )
    os.close(out_w)
    stdout = Stdout(out_r)
    assert process.stdin is not None
    try:
        await process.stdin.send(_line(INITIALIZE))
        await stdout.until(b'"id":"init"')
        await process.stdin.send(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        await process.stdin.send(_line(SLEEP_CALL))
        await eventually(lambda: _running(project), within=30)
        await process.stdin.send(_line(LONG_CALL))
        # Its head has come: the rest waits for room in the pipe.
        await stdout.until(b'"id":"long"', whole=False)
        assert stdout.buf.count(b"\n") == 1  # the handshake's answer only
        await kill_host(project)
        await process.stdin.send(_line({**LONG_CALL, "id": "after"}))
        await stdout.until(b'"id":"after"')
        answers: dict[str, list[dict[str, Any]]] = {}
        for msg in stdout.messages():  # every line whole JSON: no torn line
            if "method" not in msg:
                answers.setdefault(msg["id"], []).append(msg)
    finally:
        process.kill()
        await process.wait()
        os.close(out_r)
    assert set(answers) == {"init", "sleep", "long", "after"}
    assert all(len(got) == 1 for got in answers.values()), answers
    [sleep] = answers["sleep"]
    assert sleep["result"]["content"][0]["text"] == HOST_RESTARTED
    for request_id in ("long", "after"):
        [answer] = answers[request_id]
        output = answer["result"]["structuredContent"]["output"]
        assert output.startswith("1\n2\n3\n")  # the middle is cut to the answer's budget
        assert output.endswith("2999\n3000\n")
