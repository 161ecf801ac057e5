"""The escape server, `habitat terminal-mcp`: the shell verbs as `terminal_*`, on its own
state (a `Habitat` opened on `Workspace.named("terminal")`), embedded, depending on no
other habitat process.

It keeps working while the primary server is hung, killed or being redeployed; its runs
and the primary's outlive each other. `terminal_host` reports, restarts or stops the
workspace host of a workspace (`reach.launcher`): a host that does not answer within a
bound (stopped, deadlocked) is SIGKILLed rather than waited on; runs survive either way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp.types as types
from pydantic import BaseModel, ConfigDict, Field

from agent_habitat.habitat import Habitat
from agent_habitat.reach.launcher import (
    STOP_TIMEOUT_SECONDS,
    ensure_host,
    find_host,
    probe_host,
    stop_host,
)
from agent_habitat.verbs import Group, Progress
from agent_habitat.workspace import Workspace, find_project_root

from .broadcast import Broadcaster
from .handshake import TERMINAL_INSTRUCTIONS
from .render import render
from .server import HabitatServer, build_server
from .tools import ToolDef, ToolRegistry
from .verbs import verb_tools

__all__ = [
    "TerminalHostArgs",
    "TerminalHostResult",
    "TerminalServer",
    "host_action",
    "terminal_server",
]

PROBE_SECONDS = 2.0
"""How long a host may take to answer `/api/status` before it counts as hung."""

INSTRUCTIONS = TERMINAL_INSTRUCTIONS

_HOST_DESCRIPTION = (
    "Status, restart or stop of a workspace's habitat host (default: the git work tree around "
    "this server's cwd) — the process behind `habitat mcp`, the CLI and the dashboard. "
    "`status`: pid, uptime, whether it answers, tabs and running runs. `restart`: stop it "
    "(SIGKILL at once when it does not answer: hung or stopped) and start a new one; the "
    "bridge of the MCP client reconnects by itself. `stop`: stop it; the next client starts "
    "one again. Runs started in its tabs go on in their own sessions and are re-adopted."
)


_GROUPS: tuple[Group, ...] = ("shell",)
"""Only the shell verbs: the escape terminal must work with no project open."""


class TerminalHostArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["status", "restart", "stop"]
    workspace: str | None = Field(
        default=None, description="Project folder of the workspace; default the cwd's project."
    )


class TerminalHostResult(BaseModel):
    action: Literal["status", "restart", "stop"]
    workspace: str = Field(description="The workspace's project folder.")
    state_dir: str = Field(description="Where that workspace's state lives.")
    host_running: bool = Field(description="Whether a host runs for it after the action.")
    pid: int | None = Field(default=None, description="The running host's pid, if any.")
    responding: bool | None = Field(
        default=None, description="Whether that host answered (None: no host runs)."
    )
    previous_pid: int | None = Field(
        default=None, description="The host the action stopped or killed, if any."
    )
    done: bool = Field(description="Whether anything was changed.")
    message: str


def _resolve(args: TerminalHostArgs, cwd: Path) -> Path:
    return find_project_root(Path(cwd, args.workspace).expanduser() if args.workspace else cwd)


def host_action(args: TerminalHostArgs, cwd: Path) -> TerminalHostResult:
    """Do `args.action` to the workspace host (blocking, bounded: run it in a thread)."""
    root = _resolve(args, cwd)
    state_dir = str(Workspace.for_project(root).state_dir)
    record = find_host(root)
    status = probe_host(record, PROBE_SECONDS) if record is not None else None
    previous: int | None = None
    notes: list[str] = []
    if args.action in ("stop", "restart") and record is not None:
        previous = record.pid
        hung = status is None
        # A stopped process never handles SIGTERM, so a host that does not answer is killed.
        stopped = stop_host(root, grace=0 if hung else STOP_TIMEOUT_SECONDS)
        if stopped is None:
            notes.append(f"host pid {previous} had already ended")
        elif hung:
            notes.append(
                f"killed host pid {previous} (it did not answer within {PROBE_SECONDS:.0f}s)"
                + (f"; stopped its {', '.join(stopped.reaped)}" if stopped.reaped else "")
            )
        else:
            notes.append(stopped.said())
    elif args.action == "stop":
        notes.append("no host ran; nothing to stop")
    if args.action == "restart":
        handle = ensure_host(root)
        record = handle.record
        status = probe_host(record, PROBE_SECONDS)
        notes.append(f"started host pid {record.pid}")
    elif args.action == "stop":
        record, status = None, None
    if record is None:
        if args.action == "status":
            notes.append("no host runs for this workspace (the next client starts one)")
        return TerminalHostResult(
            action=args.action,
            workspace=str(root),
            state_dir=state_dir,
            host_running=False,
            previous_pid=previous,
            done=previous is not None,
            message="; ".join(notes) + ".",
        )
    if status is None:
        notes.append(f"host pid {record.pid} runs but does not answer: `restart` kills it")
    else:
        running = [f"{r['tab']} (pid {r['pid']})" for r in status.get("running", [])]
        notes.append(
            f"host pid {record.pid} answers: up {status.get('uptime_s', 0):.0f}s, "
            f"{len(status.get('tabs', []))} tab(s), running: {', '.join(running) or 'nothing'}"
        )
    return TerminalHostResult(
        action=args.action,
        workspace=str(root),
        state_dir=state_dir,
        host_running=True,
        pid=record.pid,
        responding=status is not None,
        previous_pid=previous,
        done=args.action != "status",
        message="; ".join(notes) + ".",
    )


@dataclass
class TerminalServer:
    server: HabitatServer
    habitat: Habitat


@asynccontextmanager
async def terminal_server(
    habitat: Habitat, *, cwd: Path | None = None
) -> AsyncIterator[TerminalServer]:
    """Build the escape server over a habitat opened on `Workspace.named("terminal")`.

    `cwd` is where `terminal_host` looks for the default workspace (the process cwd).
    """
    cwd = (cwd or Path.cwd()).resolve()

    async def terminal_host(args: Any, progress: Progress | None) -> BaseModel:
        return await anyio.to_thread.run_sync(host_action, args, cwd)

    host = ToolDef(
        name="terminal_host",
        args=TerminalHostArgs,
        result=TerminalHostResult,
        description=_HOST_DESCRIPTION,
        handler=terminal_host,
        annotations=types.ToolAnnotations(open_world_hint=False),
    )
    tools = [*verb_tools(habitat, "terminal", _GROUPS), host]
    broadcaster = Broadcaster()
    server = build_server(
        "agent-habitat-terminal",
        instructions=INSTRUCTIONS,
        tools=ToolRegistry(lambda: tools, defaults=lambda: {"cwd": habitat.shell.default_cwd()}),
        broadcaster=broadcaster,
    )
    try:
        yield TerminalServer(server, habitat)
    finally:
        broadcaster.close()


@render.register
def _render(result: TerminalHostResult) -> str:
    return (
        f"done={str(result.done).lower()} host_running={str(result.host_running).lower()} "
        f"pid={result.pid} action={result.action} workspace={result.workspace}\n"
        f"{result.message}\n"
    )
