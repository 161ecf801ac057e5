"""The open project: from `--project`, else the client's roots, else the git work tree
around the server's cwd; `project_open(path)` switches it.

A change is announced to every client (`tools/list_changed`, both eras) because the tool
list and its descriptions are a function of the open project.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlparse

import anyio
import mcp.types as types
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError, NoBackChannelError
from pydantic import BaseModel, ConfigDict, Field

from agent_habitat.errors import UsageError
from agent_habitat.workspace import scm_root

from .render import render

__all__ = ["Project", "ProjectOpenArgs", "ProjectOpenResult", "ProjectSource"]

logger = logging.getLogger(__name__)

ProjectSource = Literal["flag", "roots", "cwd", "project_open"]

ROOTS_TIMEOUT_SECONDS = 5.0
"""How long a tool call waits for the client to answer `roots/list` before going on."""


class ProjectOpenArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        min_length=1,
        description="Folder of the project (absolute, or relative to the server's cwd).",
    )


class ProjectOpenResult(BaseModel):
    root: str = Field(description="The project now open.")
    previous: str | None = Field(description="The project open before, if any.")
    git_root: str | None = Field(description="The git work tree containing it, if any.")
    source: ProjectSource


OnChange = Callable[[Path], Awaitable[None]]


class Project:
    """Which project is open, where it came from, and who to tell when it changes."""

    def __init__(self, root: Path | None, source: ProjectSource | None, cwd: Path) -> None:
        self.root = root
        self.source = source
        self._cwd = cwd
        self._listeners: list[OnChange] = []
        self._settled = anyio.Event()
        self._settled.set()

    @classmethod
    def initial(cls, flag: Path | None, cwd: Path) -> Project:
        """`--project` when given; else the git work tree around `cwd`; else none (yet)."""
        cwd = cwd.resolve()
        if flag is not None:
            return cls(_existing_dir(flag, cwd), "flag", cwd)
        around = scm_root(cwd)
        return cls(around, "cwd" if around else None, cwd)

    def on_change(self, listener: OnChange) -> None:
        self._listeners.append(listener)

    async def open(
        self, path: str | Path, source: ProjectSource = "project_open"
    ) -> ProjectOpenResult:
        """Switch to `path`; listeners run (tab cwd default, list_changed) when it differs."""
        root = _existing_dir(Path(path), self._cwd)
        previous = self.root
        self.root, self.source = root, source
        if root != previous:
            for listener in self._listeners:
                await listener(root)
        git = scm_root(root)
        return ProjectOpenResult(
            root=str(root),
            previous=str(previous) if previous else None,
            git_root=str(git) if git else None,
            source=source,
        )

    async def adopt_client_roots(self, session: ServerSession) -> None:
        """Open the client's first `file://` root, unless `--project` or `project_open` chose."""
        if self.source in ("flag", "project_open"):
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
                    path = _file_uri_path(str(root.uri))
                    if path is not None and path.is_dir() and self.source != "project_open":
                        await self.open(path, "roots")
                        break
        except (MCPError, NoBackChannelError) as exc:
            logger.info("client did not list its roots (%s); keeping %s", exc, self.root)
        finally:
            self._settled.set()

    async def settled(self) -> None:
        """Wait (bounded) until a pending `roots/list` exchange has finished."""
        with anyio.move_on_after(ROOTS_TIMEOUT_SECONDS):
            await self._settled.wait()

    def describe(self) -> str:
        if self.root is None:
            return "No project is open (commands start in the server's cwd)."
        return f"Open project: {self.root} (from {self.source})."


def _existing_dir(path: Path, base: Path) -> Path:
    resolved = (base / path.expanduser()).resolve()
    if not resolved.is_dir():
        raise UsageError(f"path {str(path)!r} is not an existing folder; pass a project directory")
    return resolved


def _file_uri_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


@render.register
def _render(result: ProjectOpenResult) -> str:
    git = f" (git work tree {result.git_root})" if result.git_root else " (not in a git work tree)"
    before = f"; before: {result.previous}" if result.previous else ""
    return f"project={result.root}{git}{before}\n"
