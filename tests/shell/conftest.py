"""A shell habitat over fakes: scripted commands (no shell starts) and a clock that stands
still until a test advances it. The state database is a real file in a temporary folder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest

from agent_habitat.config import ShellConfig
from agent_habitat.events import InMemoryEventBus
from agent_habitat.shell import Shell
from agent_habitat.shell.service import Keeping
from agent_habitat.shell.spool_keeping import SpoolKeeping
from agent_habitat.store import Database
from agent_habitat.testing import FakeClock, FakeSpawner, Script
from agent_habitat.workspace import Workspace

OpenHabitat = Callable[..., AbstractAsyncContextManager[Shell]]


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
    """Opens a shell over the fakes; `config`, `project_root` and `keeping` may be
    overridden."""

    @asynccontextmanager
    async def opened(
        config: ShellConfig | None = None,
        project_root: Path | None = project,
        keeping: Keeping = SpoolKeeping,
    ) -> AsyncIterator[Shell]:
        workspace = Workspace.for_project(project)
        workspace.ensure()
        db = Database(workspace.db_path)
        try:
            async with Shell.open(
                workspace,
                config or ShellConfig(),
                db=db,
                bus=InMemoryEventBus(workspace.label),
                project_root=project_root,
                spawner=spawner,
                clock=clock,
                keeping=keeping,
            ) as habitat:
                yield habitat
        finally:
            db.close()

    return opened


@pytest.fixture
async def habitat(open_habitat: OpenHabitat) -> AsyncIterator[Shell]:
    async with open_habitat() as opened:
        yield opened
