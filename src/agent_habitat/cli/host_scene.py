"""`habitat scene` asked of the running host straight over its unix socket.

When a host serves the workspace, the scene is what the host knows (its tabs, its runs), so
the CLI must ask it; the full path does that through the verb table and `reach.client` (the
pydantic models, httpx), which costs a second of imports for one small answer. The host's
`POST /api/shell_scene` needs no token on the socket (only the user can open it), so this
module sends that one request with the standard library and reads the JSON answer into the
scene table's plain records. Anything unexpected — no live host, no answer within
`ANSWER_SECONDS`, a status that is not 200, an answer not shaped like a scene — returns
None, and the full path asks again and reports whatever went wrong.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


# Plain records (what `cli.scene_view.SceneLike` reads), not `shell.quiet_scene`'s: that
# module brings sqlite3, dataclasses and pathlib, which a scene the host answers has no use
# for (they were most of the time `habitat scene` took through a host).
class QuietRun:
    __slots__ = ("command", "duration_s", "exit_code", "index", "state")

    def __init__(
        self, *, index: int, command: str, state: str, exit_code: int | None, duration_s: float
    ) -> None:
        self.index = index
        self.command = command
        self.state = state
        self.exit_code = exit_code
        self.duration_s = duration_s


class QuietTab:
    __slots__ = ("cwd", "last_run", "name", "pid", "shell", "state")

    def __init__(
        self,
        *,
        name: str,
        shell: str,
        state: str,
        cwd: str,
        pid: int | None,
        last_run: QuietRun | None,
    ) -> None:
        self.name = name
        self.shell = shell
        self.state = state
        self.cwd = cwd
        self.pid = pid
        self.last_run = last_run


class QuietCaps:
    __slots__ = ("history_rows", "max_tabs", "output_cap_bytes")

    def __init__(self, *, max_tabs: int, history_rows: int, output_cap_bytes: int) -> None:
        self.max_tabs = max_tabs
        self.history_rows = history_rows
        self.output_cap_bytes = output_cap_bytes


class QuietScene:
    __slots__ = ("caps", "tabs")

    def __init__(self, *, tabs: list[QuietTab], caps: QuietCaps) -> None:
        self.tabs = tabs
        self.caps = caps


__all__ = ["ANSWER_SECONDS", "host_scene", "scene_of"]

ANSWER_SECONDS = 2.0
"""How long the host may take to answer before the full path is left to wait on it."""


def scene_of(data: Any) -> QuietScene:
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


def host_scene(lock: Path | str) -> QuietScene | None:
    """The scene the live host of `lock` reports, or None (see the module docstring)."""
    from ..reach.plain_client import HostGone, live_host

    host = live_host(lock)
    if host is None:
        return None
    try:
        answer = host.ask("POST", "/api/shell_scene", {}, timeout=ANSWER_SECONDS)
    except HostGone:
        return None
    if answer.status != 200 or answer.data is None:
        return None
    try:
        return scene_of(answer.data)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
