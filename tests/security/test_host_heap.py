"""The host's long-lived heap stays out of the cyclic collector (issue 23, "Under load").

With 8 loud tabs and 20 callers, a loop-lag probe in the host found its longest stalls were
full collections: each walked every object the imports, the habitat and the MCP SDK made
(about 100,000), 66-70 ms of CPU holding the loop, 275-458 ms of wall at load 18-20, for
every caller at once. Objects alive once the host serves, and again once its MCP side is
built, are frozen (`gc.freeze`): a collection walks only what came after.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(180), pytest.mark.finding("under-load")]

_HOST_THEN_COLLECTED = """
import gc
import pathlib
import sys

import anyio
import httpx2

from agent_habitat.host.server import serve_host
from agent_habitat.reach.files import HostFiles
from agent_habitat.workspace import Workspace


def young(kind: str) -> int:
    return sum(
        type(o).__name__ == kind for generation in range(3) for o in gc.get_objects(generation)
    )


async def main(root: str) -> None:
    socket = HostFiles(Workspace.for_project(pathlib.Path(root))).socket
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_host, pathlib.Path(root))
        with anyio.fail_after(120):
            while not socket.exists():
                await anyio.sleep(0.02)
        transport = httpx2.AsyncHTTPTransport(uds=str(socket))
        async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as client:
            await client.get("/api/status", timeout=60)
            print(young("Habitat"), young("StreamableHTTPSessionManager"))
            # The first request for /mcp builds the MCP side, as an agent's connection does.
            await client.get("/mcp", timeout=60)
            print(young("Habitat"), young("StreamableHTTPSessionManager"))
        tg.cancel_scope.cancel()


anyio.run(main, sys.argv[1])
"""


def test_a_serving_host_leaves_its_long_lived_objects_out_of_collections(
    project: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _HOST_THEN_COLLECTED, str(project)],
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # Serving, its habitat is in no generation a collection walks; the MCP side, once built,
    # in none either.
    assert done.stdout.split("\n")[:2] == ["0 0", "0 0"], done.stdout + done.stderr
