"""The primary MCP server: `shell_*`, `project_*`, `file_*` and (with a project) `verify_*`
tools; `habitat://scene` and `habitat://verify/epoch`; the `verify`, `cancel`, `status` prompts.

It serves a `Habitat` built by the composition root (`agent_habitat.habitat`): the shell
tabs run in that process, over the workspace's state, so a server started later over the
same state adopts the runs this one leaves behind.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio

from agent_habitat.habitat import Habitat
from agent_habitat.project import Project

from .accounting import SessionNames
from .broadcast import Broadcaster
from .handshake import PRIMARY_INSTRUCTIONS
from .prompts import Prompts
from .resources import Resources
from .roots import ClientRoots
from .server import HabitatServer, build_server
from .tools import ToolDef, ToolRegistry
from .verbs import verb_tools

__all__ = ["PrimaryServer", "primary_server"]

INSTRUCTIONS = PRIMARY_INSTRUCTIONS


@dataclass
class PrimaryServer:
    """The assembled server and the habitat it serves; valid inside `primary_server`."""

    server: HabitatServer
    habitat: Habitat
    broadcaster: Broadcaster

    @property
    def project(self) -> Project:
        return self.habitat.project


@asynccontextmanager
async def primary_server(habitat: Habitat) -> AsyncIterator[PrimaryServer]:
    """Build the primary server over an open habitat (which outlives it)."""
    broadcaster = Broadcaster()
    roots = ClientRoots(habitat.project)

    async def announce(root: Path) -> None:
        # The tool and prompt lists are functions of the open project (descriptions, verify).
        await broadcaster.tools_changed()
        await broadcaster.prompts_changed()

    def build_tools() -> list[ToolDef]:
        if habitat.project.root is None:  # only what works without a project (DESIGN §4)
            return [
                tool
                for tool in verb_tools(habitat, "shell", ("shell", "project"))
                if tool.name not in ("project_scene", "project_trust")
            ]
        return verb_tools(habitat, "shell", ("shell", "project", "file", "verify"))

    built: dict[str, list[ToolDef]] = {}

    def tools() -> list[ToolDef]:
        # A function of the open project alone (its descriptions name it): built once per
        # project, not on every call, which looks its tool up here.
        key = habitat.project.describe()
        if key not in built:
            built.clear()
            built[key] = build_tools()
        return built[key]

    scene = Resources(habitat, broadcaster)
    sessions = SessionNames(habitat)
    server = build_server(
        "agent-habitat",
        instructions=INSTRUCTIONS,
        tools=ToolRegistry(
            tools,
            before_call=roots.settled,
            around=sessions.around,
            defaults=lambda: {"cwd": habitat.shell.default_cwd()},
        ),
        broadcaster=broadcaster,
        scene=scene,
        prompts=Prompts(habitat, sessions.name),
        on_roots=roots.adopt,
    )
    unsubscribe = habitat.project.on_change(announce)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(scene.relay_changes)
            try:
                yield PrimaryServer(server, habitat, broadcaster)
            finally:
                broadcaster.close()
                tg.cancel_scope.cancel()
    finally:
        unsubscribe()
