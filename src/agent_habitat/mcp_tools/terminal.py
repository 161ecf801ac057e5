"""The escape server, `habitat terminal-mcp`: the shell verbs as `terminal_*`, on its own
state (a `Habitat` opened on `Workspace.named("terminal")`), embedded, depending on no
other habitat process.

It keeps working while the primary server is hung, killed or being redeployed; its runs
and the primary's outlive each other. `terminal_host` is where restarting the primary's
host will live; no host daemon exists yet, and it says so rather than pretend.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import mcp.types as types
from pydantic import BaseModel, ConfigDict, Field

from agent_habitat.habitat import Habitat
from agent_habitat.verbs import Group, Progress
from agent_habitat.workspace import Workspace, find_project_root

from .broadcast import Broadcaster
from .render import render
from .server import HabitatServer, build_server
from .tools import ToolDef, ToolRegistry
from .verbs import verb_tools

__all__ = ["TerminalHostArgs", "TerminalHostResult", "TerminalServer", "terminal_server"]

INSTRUCTIONS = (
    "agent-habitat escape terminal: shell tabs (terminal_*) that do not depend on the primary "
    "habitat server. Use them when shell_* tools hang or the primary server is down; its tabs "
    "are separate from the primary's."
)

_HOST_DESCRIPTION = (
    "Status, restart or stop of a workspace's habitat host daemon (default: the git work tree "
    "around this server's cwd). This version has no host daemon yet: the primary server "
    "(`habitat mcp`) runs embedded in the MCP client's own process, so the call reports that "
    "and changes nothing; restart the primary from the MCP client instead."
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
    host_running: bool = Field(description="Always false until a host daemon exists.")
    done: bool = Field(description="Whether anything was changed (never, for now).")
    message: str


def host_result(args: TerminalHostArgs, cwd: Path) -> TerminalHostResult:
    root = find_project_root(Path(cwd, args.workspace).expanduser() if args.workspace else cwd)
    workspace = Workspace.for_project(root)
    nothing = "nothing was done" if args.action != "status" else "there is nothing to report"
    return TerminalHostResult(
        action=args.action,
        workspace=str(root),
        state_dir=str(workspace.state_dir),
        host_running=False,
        done=False,
        message=(
            "No host daemon exists yet in this version of agent-habitat: `habitat mcp` runs the "
            f"shell habitat embedded in its own process, so {nothing}. Runs started by that "
            "server live on in their own sessions; to restart the server itself, restart it "
            "from the MCP client."
        ),
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
        return host_result(args, cwd)

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
        tools=ToolRegistry(lambda: tools),
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
        f"action={result.action} workspace={result.workspace}\n{result.message}\n"
    )
