"""Shared helpers: the MCP servers over a habitat on a temporary project, and a client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp.types as types
from mcp import Client
from mcp.client.session import IncomingMessage

from agent_habitat.clock import Clock
from agent_habitat.config import ShellConfig
from agent_habitat.habitat import Habitat
from agent_habitat.mcp_tools import PrimaryServer, TerminalServer, primary_server, terminal_server
from agent_habitat.testing import FakeSpawner, eventually, open_fake_habitat
from agent_habitat.workspace import Workspace, find_project_root


def make_project(root: Path) -> Path:
    """A folder that looks like a git work tree (all the habitat checks is `.git`)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    return root


@dataclass
class Inbox:
    """Notifications a client received, in order."""

    messages: list[types.ServerNotification] = field(default_factory=list)

    async def __call__(self, message: IncomingMessage) -> None:
        if not isinstance(message, Exception):
            self.messages.append(message)

    def methods(self) -> list[str]:
        return [m.method for m in self.messages]

    async def wait_for(self, method: str, count: int = 1) -> None:
        await eventually(lambda: self.methods().count(method) >= count)


@asynccontextmanager
async def open_primary(
    project: Path | None, *, cwd: Path | None = None, config: ShellConfig | None = None
) -> AsyncIterator[PrimaryServer]:
    """What `habitat mcp --project PROJECT` builds when started in `cwd`."""
    root = project if project is not None else find_project_root(cwd)
    async with (
        Habitat.open(Workspace.for_project(root), project=project, config=config) as habitat,
        primary_server(habitat) as primary,
    ):
        yield primary


@asynccontextmanager
async def open_terminal(*, cwd: Path | None = None) -> AsyncIterator[TerminalServer]:
    """What `habitat terminal-mcp` builds when started in `cwd`."""
    async with (
        Habitat.open(Workspace.named("terminal")) as habitat,
        terminal_server(habitat, cwd=cwd) as terminal,
    ):
        yield terminal


@asynccontextmanager
async def primary_client(
    project: Path | None, *, cwd: Path | None = None, mode: str = "legacy", **client: Any
) -> AsyncIterator[tuple[PrimaryServer, Client]]:
    async with (
        open_primary(project, cwd=cwd or project) as primary,
        Client(primary.server, mode=mode, **client) as connected,
    ):
        yield primary, connected


@asynccontextmanager
async def fake_primary_client(
    project: Path, spawner: FakeSpawner, *, clock: Clock | None = None
) -> AsyncIterator[tuple[PrimaryServer, Client]]:
    """The primary server over `open_fake_habitat`: its shell plays `spawner`'s scripts
    (on `clock`, a still `FakeClock` by default), and a client connected to it."""
    async with (
        open_fake_habitat(project, spawner=spawner, clock=clock) as habitat,
        primary_server(habitat) as primary,
        Client(primary.server, mode="legacy") as connected,
    ):
        yield primary, connected


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def output(result: types.CallToolResult) -> str:
    """The output body: the structured content carries it (the text block is one line)."""
    assert not result.is_error, text(result)
    assert isinstance(result.structured_content, dict)
    body = result.structured_content.get("output", "")  # absent: the run printed nothing
    assert isinstance(body, str)
    return body
