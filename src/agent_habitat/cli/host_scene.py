"""`habitat scene` asked of the running host straight over its unix socket.

When a host serves the workspace, the scene is what the host knows (its tabs, its runs), so
the CLI must ask it; the full path does that through the verb table and `host.client` (the
pydantic models, httpx), which costs a second of imports for one small answer. The host's
`POST /api/shell_scene` needs no token on the socket (only the user can open it), so this
module sends that one request with the standard library and reads the JSON answer into the
scene table's plain records. Anything unexpected — no live host, no answer within
`ANSWER_SECONDS`, a status that is not 200, an answer not shaped like a scene — returns
None, and the full path asks again and reports whatever went wrong.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from pathlib import Path
from typing import Any

from ..shell.quiet_scene import QuietCaps, QuietRun, QuietScene, QuietTab

__all__ = ["ANSWER_SECONDS", "host_scene"]

ANSWER_SECONDS = 2.0
"""How long the host may take to answer before the full path is left to wait on it."""

_REQUEST = (
    b"POST /api/shell_scene HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    b"Content-Length: 2\r\nConnection: close\r\n\r\n{}"
)


def _live_socket(lock: Path) -> str | None:
    """The socket named in `host.lock` while a live host holds the lock (`host.lock`)."""
    try:
        fd = os.open(lock, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # held: a host runs
        else:
            return None  # nobody holds it: whatever the file says, no host runs
        record = json.loads(os.pread(fd, 1 << 16, 0) or b"null")
    except ValueError:
        return None  # still being written: a starting host
    finally:
        os.close(fd)
    path = record.get("socket") if isinstance(record, dict) else None
    return path if isinstance(path, str) else None


def _ask(path: str) -> Any:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(ANSWER_SECONDS)
        conn.connect(path)
        conn.sendall(_REQUEST)
        chunks = []
        while chunk := conn.recv(1 << 16):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    status, *headers = head.decode("latin-1").split("\r\n")
    fields = dict(h.lower().split(":", 1) for h in headers if ":" in h)
    if status.split()[1:2] != ["200"] or "chunked" in fields.get("transfer-encoding", ""):
        return None
    return json.loads(body)


def _scene(data: Any) -> QuietScene:
    """The answer as the table's records; KeyError/TypeError/ValueError when it is not one."""
    tabs = []
    for tab in data["tabs"]:
        last = tab["last_run"]
        run = None
        if last is not None:
            code = last["exit_code"]
            run = QuietRun(
                index=int(last["index"]),
                command=str(last["command"]),
                state=str(last["state"]),
                exit_code=None if code is None else int(code),
                duration_s=float(last["duration_s"]),
            )
        pid = tab["pid"]
        tabs.append(
            QuietTab(
                name=str(tab["name"]),
                shell=str(tab["shell"]),
                state=str(tab["state"]),
                cwd=str(tab["cwd"]),
                pid=None if pid is None else int(pid),
                last_run=run,
            )
        )
    caps = data["caps"]
    return QuietScene(
        tabs=tabs,
        caps=QuietCaps(
            max_tabs=int(caps["max_tabs"]),
            history_rows=int(caps["history_rows"]),
            output_cap_bytes=int(caps["output_cap_bytes"]),
        ),
    )


def host_scene(lock: Path) -> QuietScene | None:
    """The scene the live host of `lock` reports, or None (see the module docstring)."""
    path = _live_socket(lock)
    if path is None:
        return None
    try:
        data = _ask(path)
        return None if data is None else _scene(data)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
