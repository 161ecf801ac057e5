"""The composition root: one place that builds a workspace's services, with one lifespan.

database → journal → bus → project → shell tabs (and, with the next issues, the verify
runner and the file watcher, as more attributes). Every adapter — the MCP servers, the
CLI, the host's HTTP API — takes the built `Habitat` instead of assembling its own, so
they all share one bus and one journal. Core: nothing here imports an adapter.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from .config import ShellConfig, load_shell_config
from .events import EventBus, InMemoryEventBus
from .project import Project, existing_dir
from .shell import ShellHabitat
from .store import Database, SqliteJournal
from .workspace import Workspace

__all__ = ["Habitat"]


class Habitat:
    """A workspace's services; valid inside `async with Habitat.open(...)`."""

    def __init__(
        self,
        workspace: Workspace,
        config: ShellConfig,
        db: Database,
        journal: SqliteJournal,
        bus: EventBus,
        project: Project,
        shell: ShellHabitat,
    ) -> None:
        self.workspace = workspace
        self.config = config
        self.db = db
        self.journal = journal
        self.bus = bus
        self.project = project
        self.shell = shell

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        workspace: Workspace,
        *,
        project: Path | None = None,
        config: ShellConfig | None = None,
    ) -> AsyncIterator[Habitat]:
        """Build the services over the workspace's state; closed in reverse on exit.

        `project` is opened at start (source `flag`); without it the git work tree of the
        workspace root is (source `cwd`), else no project is open. `config` defaults to the
        project's `[tool.habitat]` with `HABITAT_*` overrides. Runs an earlier habitat left
        are adopted; background runs outlive this one by design.
        """
        workspace.ensure()
        db = Database(workspace.db_path)
        try:
            # Config is read before the journal: it bounds the journal. A bad key fails here,
            # at start, naming it.
            start_root = existing_dir(project) if project is not None else None
            config = config or load_shell_config(start_root or workspace.root)
            journal = SqliteJournal(db, config.journal_limit)
            bus = InMemoryEventBus(workspace.label, journal)
            opened = Project.at_start(bus, project, workspace.root)
            async with ShellHabitat.open(
                workspace, config, db=db, bus=bus, project_root=opened.root
            ) as shell:

                async def follow(root: Path) -> None:
                    shell.set_project_root(root)

                opened.on_change(follow)
                yield cls(workspace, config, db, journal, bus, opened, shell)
        finally:
            db.close()
