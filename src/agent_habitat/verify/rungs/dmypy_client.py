"""The warm recheck without a client process: the `run` request sent to the live dmypy
daemon from this process, over its socket, with the habitat's own mypy client library.

`dmypy run` as a process starts a Python interpreter and imports mypy's client before it
says a word to the daemon: on a busy machine that is most of a warm recheck's time. Sent
from here, only the daemon's own work remains. Used only when the daemon is the habitat's
own mypy (same client and server version) and is alive; anything else — a daemon that
wants a restart (its options changed), an error on the socket, a dead daemon — falls back
to the `dmypy run` process, which starts or restarts it. The daemon's lifetime stays with
`DmypyDaemon` (dmypy.py).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from ..command import Outcome, answered

__all__ = ["run_in_process"]


def _request(status_file: Path, flags: list[str], timeout: int) -> dict[str, Any]:
    from mypy.dmypy import client  # the habitat's mypy: only when this path is taken
    from mypy.ipc import BadStatus
    from mypy.version import __version__

    try:
        return client.request(
            str(status_file),
            "run",
            timeout=timeout,
            version=__version__,
            args=flags,
            export_types=False,
        )
    except BadStatus as exc:
        return {"error": f"bad status: {exc}"}


async def run_in_process(
    status_file: Path, argv: list[str], spool: Path, timeout_s: float, cap: int
) -> Outcome | None:
    """The daemon's answer to `argv` (a `dmypy … run -- FLAGS` command line) as an outcome
    of that command; None when the `dmypy run` process must do it instead."""
    flags = argv[argv.index("--") + 1 :]
    started = time.monotonic()
    # Abandoned on cancel: the daemon finishes the check on its own and stays warm.
    response = await anyio.to_thread.run_sync(
        _request, status_file, flags, max(1, int(timeout_s)), abandon_on_cancel=True
    )
    if "restart" in response or "error" in response or "status" not in response:
        return None
    text = str(response.get("out", "")) + str(response.get("err", ""))
    return await answered(
        argv, int(response["status"]), text, spool, started, cap, encoding_errors="replace"
    )
