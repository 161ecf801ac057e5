from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.config import ShellConfig
from agent_habitat.habitat import Habitat
from agent_habitat.proc import kill_tree, members
from agent_habitat.shell import Shell
from agent_habitat.workspace import Workspace

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything here runs real processes or transports: all of it is `e2e`
    (`-m "not e2e"` runs the fast tests alone)."""
    for item in items:
        if _HERE in item.path.parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def shell_config() -> ShellConfig:
    return ShellConfig(kill_grace_seconds=0.5)


@pytest.fixture
async def habitat(project: Path, shell_config: ShellConfig) -> AsyncIterator[Shell]:
    async with Habitat.open(
        Workspace.for_project(project), project=project, config=shell_config
    ) as opened:
        yield opened.shell
        await kill_leftovers(opened.shell)


async def kill_leftovers(habitat: Shell) -> None:
    """Runs outlive the habitat by design; a test must not leave them to the next one."""
    for row in habitat.db.query("SELECT id FROM runs"):
        run = habitat.store.get(row["id"])
        if run is not None and run.record is not None and members(run.record):
            await kill_tree(run.record, grace=0.2)
