"""The MCP client's roots as the open project: asked of 2025-era clients with `roots/list`.

The project itself is core (`agent_habitat.project.Project`); this is only the MCP way of
learning which folder the client works in. `--project` and `project_open` win over roots.
"""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import unquote, urlparse

import anyio
import mcp.types as types
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError, NoBackChannelError

from agent_habitat.errors import UsageError
from agent_habitat.project import Project, a_project

__all__ = ["ROOTS_TIMEOUT_SECONDS", "ClientRoots"]

logger = logging.getLogger(__name__)

ROOTS_TIMEOUT_SECONDS = 5.0
"""How long a tool call waits for the client to answer `roots/list` before going on."""


class ClientRoots:
    """Opens a connecting client's first `file://` root; tool calls wait until it is known."""

    def __init__(self, project: Project) -> None:
        self._project = project
        self._settled = anyio.Event()
        self._settled.set()

    async def adopt(self, session: ServerSession) -> None:
        """Open the client's first `file://` root, unless `--project` or `project_open` chose."""
        project = self._project
        if project.source in ("flag", "project_open"):
            return
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return
        self._settled = anyio.Event()
        try:
            with anyio.move_on_after(ROOTS_TIMEOUT_SECONDS):
                # Sent by hand: `ServerSession.list_roots` warns that roots are deprecated
                # in 2026-07-28, but 2025-era clients (all of today's) still offer them.
                listed = await session.send_request(types.ListRootsRequest(), types.ListRootsResult)
                for root in listed.roots:
                    path = _project_of(str(root.uri))
                    if path is not None and project.source != "project_open":
                        await project.open(path, "roots")
                        break
        except (MCPError, NoBackChannelError) as exc:
            logger.info("client did not list its roots (%s); keeping %s", exc, project.root)
        finally:
            self._settled.set()

    async def settled(self) -> None:
        """Wait (bounded) until a pending `roots/list` exchange has finished. None pending
        (every call but the first few): no wait, no timer and no turn of the event loop."""
        if self._settled.is_set():
            return
        with anyio.move_on_after(ROOTS_TIMEOUT_SECONDS):
            await self._settled.wait()


def _project_of(uri: str) -> Path | None:
    """The folder of a `file://` root when it is a project (`a_project`, as `project_open`
    checks it): a client listing `/` or a home folder opens nothing, and it is logged."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    try:
        return a_project(Path(unquote(parsed.path)))
    except UsageError as exc:
        logger.info("client root %s not opened: %s", uri, exc)
        return None
