"""The primary MCP server: `shell_*` tools, `project_open`, `habitat://scene`, `status`.

Embedded: the shell habitat runs in this process, over the workspace's state, so a
server started later over the same state adopts the runs this one leaves behind.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from pydantic import BaseModel

from agent_habitat.config import ShellConfig
from agent_habitat.shell import ShellHabitat
from agent_habitat.workspace import Workspace

from .broadcast import Broadcaster
from .project import Project, ProjectOpenArgs, ProjectOpenResult
from .prompts import Prompts
from .resources import SceneResource
from .server import HabitatServer, build_server
from .service import Progress
from .tools import ToolDef, ToolRegistry
from .verbs import shell_tools

__all__ = ["PrimaryServer", "open_primary"]

INSTRUCTIONS = (
    "agent-habitat: persistent shell tabs shared with the person beside you. Run commands with "
    "shell_run (tabs keep cwd and exported variables; different tabs run in parallel), check "
    "what is running with shell_scene, follow long or background runs with shell_wait and "
    "shell_last. Runs survive server restarts. Open another project with project_open."
)

_PROJECT_OPEN = (
    "Open a project folder: commands in tabs that still sit at the old project's folder start "
    "in the new one, and the tool list is refreshed. {current} Use it when the user points you "
    "at another repository."
)


@dataclass
class PrimaryServer:
    """The assembled server and the state it serves; valid inside `open_primary`."""

    server: HabitatServer
    habitat: ShellHabitat
    project: Project
    broadcaster: Broadcaster


@asynccontextmanager
async def open_primary(
    project: Path | None = None,
    *,
    cwd: Path | None = None,
    config: ShellConfig | None = None,
) -> AsyncIterator[PrimaryServer]:
    """Open the shell habitat and build the primary server over it.

    The workspace (where state lives) is the `--project` folder, else the git work tree
    around `cwd`, else `cwd`; the open project can change later (client roots,
    `project_open`), the state folder does not.
    """
    cwd = (cwd or Path.cwd()).resolve()
    state = Project.initial(project, cwd)
    workspace = Workspace.for_project(state.root or cwd)
    broadcaster = Broadcaster()
    async with ShellHabitat.open(workspace, config, project_root=state.root) as habitat:

        async def follow(root: Path) -> None:
            habitat.set_project_root(root)
            habitat.bus.publish("project.opened", data={"root": str(root), "source": state.source})
            await broadcaster.tools_changed()

        state.on_change(follow)

        async def project_open(args: Any, progress: Progress | None) -> BaseModel:
            result: ProjectOpenResult = await state.open(args.path)
            return result

        shell = shell_tools(habitat, "shell")

        def tools() -> list[ToolDef]:
            return [
                *shell,
                ToolDef(
                    name="project_open",
                    args=ProjectOpenArgs,
                    result=ProjectOpenResult,
                    description=_PROJECT_OPEN.format(current=state.describe()),
                    handler=project_open,
                    annotations=types.ToolAnnotations(idempotent_hint=True, open_world_hint=False),
                ),
            ]

        scene = SceneResource(habitat, broadcaster)
        server = build_server(
            "agent-habitat",
            instructions=INSTRUCTIONS,
            tools=ToolRegistry(tools, before_call=state.settled),
            broadcaster=broadcaster,
            scene=scene,
            prompts=Prompts(habitat, state.describe),
            on_roots=state.adopt_client_roots,
        )
        async with anyio.create_task_group() as tg:
            tg.start_soon(scene.relay_changes)
            try:
                yield PrimaryServer(server, habitat, state, broadcaster)
            finally:
                broadcaster.close()
                tg.cancel_scope.cancel()
