"""A shell habitat over fakes: scripted commands (no shell starts) and a clock that stands
still until a test advances it. The state database is a real file in a temporary folder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import anyio
import pytest

from agent_habitat.config import ShellConfig
from agent_habitat.events import InMemoryEventBus
from agent_habitat.shell import ShellHabitat
from agent_habitat.store import Database
from agent_habitat.testing import FakeClock, FakeSpawner, Script
from agent_habitat.workspace import Workspace

OpenHabitat = Callable[..., AbstractAsyncContextManager[ShellHabitat]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def spawner() -> FakeSpawner:
    return FakeSpawner(default=Script())


@pytest.fixture
def open_habitat(project: Path, spawner: FakeSpawner, clock: FakeClock) -> OpenHabitat:
    """Opens a habitat over the fakes; `config` and `project_root` may be overridden."""

    @asynccontextmanager
    async def opened(
        config: ShellConfig | None = None, project_root: Path | None = project
    ) -> AsyncIterator[ShellHabitat]:
        workspace = Workspace.for_project(project)
        workspace.ensure()
        db = Database(workspace.db_path)
        try:
            async with anyio.create_task_group() as tg:
                habitat = ShellHabitat(
                    workspace,
                    config or ShellConfig(),
                    db,
                    InMemoryEventBus(workspace.label),
                    tg,
                    project_root,
                    spawner=spawner,
                    clock=clock,
                )
                habitat._adopt_all()
                yield habitat
                tg.cancel_scope.cancel()
        finally:
            db.close()

    return opened


@pytest.fixture
async def habitat(open_habitat: OpenHabitat) -> AsyncIterator[ShellHabitat]:
    async with open_habitat() as opened:
        yield opened
