"""What the MCP layer needs from the shell habitat (`agent_habitat.shell.ShellHabitat`).

A Protocol, so the adapters depend on the verbs and not on how tabs are kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from agent_habitat.config import ShellConfig
from agent_habitat.events import EventBus
from agent_habitat.shell import Progress
from agent_habitat.shell.models import (
    CloseArgs,
    CloseResult,
    HistoryArgs,
    HistoryResult,
    InputArgs,
    InputResult,
    KillArgs,
    KillResult,
    LastArgs,
    LastResult,
    RerunArgs,
    RunArgs,
    RunResult,
    SceneResult,
    WaitArgs,
    WaitResult,
    WhichArgs,
    WhichResult,
)

__all__ = ["Progress", "ShellService"]


class ShellService(Protocol):
    @property
    def bus(self) -> EventBus: ...

    @property
    def config(self) -> ShellConfig: ...

    @property
    def project_root(self) -> Path | None: ...

    def set_project_root(self, path: Path) -> None: ...

    async def run(self, args: RunArgs, progress: Progress | None = None) -> RunResult: ...

    async def rerun(self, args: RerunArgs, progress: Progress | None = None) -> RunResult: ...

    async def scene(self) -> SceneResult: ...

    async def history(self, args: HistoryArgs) -> HistoryResult: ...

    async def last(self, args: LastArgs) -> LastResult: ...

    async def which(self, args: WhichArgs) -> WhichResult: ...

    async def kill(self, args: KillArgs) -> KillResult: ...

    async def close(self, args: CloseArgs) -> CloseResult: ...

    async def wait(self, args: WaitArgs, progress: Progress | None = None) -> WaitResult: ...

    async def input(self, args: InputArgs) -> InputResult: ...
