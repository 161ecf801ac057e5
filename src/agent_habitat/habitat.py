"""The composition root: one place that builds a workspace's services, with one lifespan.

database → journal → bus → project → shell tabs (and, with the next issues, the verify
runner and the file watcher, as more attributes). Every adapter — the MCP servers, the
CLI, the host's HTTP API — takes the built `Habitat` instead of assembling its own, so
they all share one bus and one journal. Core: nothing here imports an adapter.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from .config import ShellConfig, load_shell_config
from .events import EventBus, InMemoryEventBus
from .files import FileEditor
from .project import Project, existing_dir
from .project_scene import EpochGlance
from .shell import ShellHabitat
from .store import Database, SqliteJournal
from .workspace import Workspace

__all__ = ["Habitat"]


@dataclass(eq=False, kw_only=True)
class Habitat:
    """A workspace's services; valid inside `async with Habitat.open(...)`."""

    workspace: Workspace
    config: ShellConfig
    db: Database
    journal: SqliteJournal
    bus: EventBus
    project: Project
    shell: ShellHabitat
    files: FileEditor

    def verify_glance(self) -> EpochGlance | None:
        """The current verify epoch at a glance, for `project_scene`; None before any."""
        return None

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        workspace: Workspace,
        *,
        project: Path | None = None,
        config: ShellConfig | None = None,
    ) -> AsyncIterator[Habitat]:
        """Build the services over the workspace's state; they close in reverse on exit.

        `project` is opened at start (source `flag`); without it the git work tree of the
        workspace root is (source `cwd`), else no project is open. `config` defaults to the
        project's `[tool.habitat]` with `HABITAT_*` overrides; a bad key fails here, naming
        it. Runs an earlier habitat left are adopted; background runs outlive this one.
        """
        start_root = existing_dir(project) if project is not None else None
        config = config or load_shell_config(start_root or workspace.root)
        workspace.ensure()
        async with AsyncExitStack() as stack:
            db = Database(workspace.db_path)
            stack.callback(db.close)
            journal = SqliteJournal(db, config.journal_limit)
            bus = InMemoryEventBus(workspace.label, journal)
            opened = Project.at_start(bus, project, workspace.root)
            shell = await stack.enter_async_context(
                ShellHabitat.open(workspace, config, db=db, bus=bus, project_root=opened.root)
            )

            async def follow(root: Path) -> None:
                shell.set_project_root(root)

            opened.on_change(follow)
            # The verify runner and the file watcher join here, each after what it needs.
            yield cls(
                workspace=workspace,
                config=config,
                db=db,
                journal=journal,
                bus=bus,
                project=opened,
                shell=shell,
                files=FileEditor(lambda: opened.root, bus),
            )
