from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.config import ShellConfig
from agent_habitat.shell import ShellHabitat
from agent_habitat.workspace import Workspace


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def shell_config() -> ShellConfig:
    return ShellConfig(kill_grace_seconds=0.5)


@pytest.fixture
async def habitat(project: Path, shell_config: ShellConfig) -> AsyncIterator[ShellHabitat]:
    async with ShellHabitat.open(
        Workspace.for_project(project), shell_config, project_root=project
    ) as opened:
        yield opened
