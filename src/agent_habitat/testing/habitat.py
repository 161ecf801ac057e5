"""A whole `Habitat` whose shell plays scripted commands: for tests of the adapters (the
MCP servers, the host's API) that need the services but no real process.

`open_fake_habitat` is `Habitat.open` with a `FakeSpawner` and a `FakeClock` by default;
everything else (the state database, the bus, the journal, the project) is real.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from ..clock import Clock
from ..config import ShellConfig
from ..habitat import Habitat
from ..workspace import Workspace
from .clock import FakeClock
from .spawner import FakeSpawner, Script

__all__ = ["open_fake_habitat"]


@asynccontextmanager
async def open_fake_habitat(
    project: Path,
    *,
    spawner: FakeSpawner | None = None,
    clock: Clock | None = None,
    config: ShellConfig | None = None,
    runner: bool = True,
    workspace: Workspace | None = None,
) -> AsyncIterator[Habitat]:
    """`Habitat.open(workspace, project=project, ...)` over fakes: `spawner` plays the
    shell's commands (default: each prints nothing and exits 0), `clock` is the shell's
    time (default: a `FakeClock` that stands still). `workspace` defaults to the project's;
    `runner` and `config` are `Habitat.open`'s."""
    async with Habitat.open(
        workspace or Workspace.for_project(project),
        project=project,
        config=config,
        runner=runner,
        spawner=spawner or FakeSpawner(default=Script()),
        clock=clock or FakeClock(),
    ) as habitat:
        yield habitat
