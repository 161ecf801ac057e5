"""The composition root: one place that builds a workspace's services, with one lifespan.

database → journal → bus → project → shell tabs → the verify runner (with its file
watcher) on the open project, re-opened when the project changes → the edit verbs, whose
writes make epochs stale at once. Every adapter — the MCP servers, the
CLI, the host's HTTP API — takes the built `Habitat` instead of assembling its own, so
they all share one bus and one journal. Core: nothing here imports an adapter.
"""

from __future__ import annotations

import contextvars
import functools
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from .config import ShellConfig, load_shell_config
from .events import EventBus, InMemoryEventBus
from .project import Project, existing_dir
from .store import Database, SqliteJournal
from .trust import ProjectTrust
from .verify.runner.config import load_runner_config
from .workspace import Workspace

if TYPE_CHECKING:
    from .clock import Clock
    from .files import FileEditor
    from .proc.spawner import Spawner
    from .project_scene import EpochGlance
    from .shell import Shell
    from .shell.quiet_run import Handed
    from .verify import VerifyRunner
    from .verify.runner.accounting import TimeAccounting
    from .verify.runner.record import EpochRecords
    from .verify.runner.slot import VerifySlot

__all__ = ["CALLER_SESSION", "Habitat", "VerifyRecord"]

CALLER_SESSION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "CALLER_SESSION", default=None
)
"""The agent session (MCP connection) whose call is being served, set by `Habitat.call`."""
NOTE_TIME_SECONDS = 1.0
"""How often at most the time accounting is written for other processes (`Habitat.call`)."""


@dataclass(eq=False, kw_only=True)
class Habitat:
    """A workspace's services; valid inside `async with Habitat.open(...)`."""

    workspace: Workspace
    config: ShellConfig
    db: Database
    journal: SqliteJournal
    bus: EventBus
    project: Project
    shell: Shell
    files: FileEditor
    trust: ProjectTrust
    """Whether a project's code may run yet (trust.py); the warm-up waits for it."""
    _core: _Core
    _noting_time: bool = False
    _noted_at: float = -NOTE_TIME_SECONDS

    @property
    def records(self) -> EpochRecords:
        """The workspace's record of verify (for processes without a runner)."""
        return self._core.records

    @property
    def accounting(self) -> TimeAccounting:
        """Time accounting per agent session and for the workspace (shared with the runner)."""
        return self._core.accounting

    @property
    def verifier(self) -> VerifySlot:
        """The verify runner's place: its services answer from the record without a runner."""
        return self._core.verifier

    @property
    def verify(self) -> VerifyRunner | None:
        """The verify runner of the open project; None while no project is open (or in a
        process that serves none, such as a one-shot CLI command)."""
        return self.verifier.runner

    async def verify_glance(self) -> EpochGlance | None:
        """The current verify epoch at a glance, for `project_scene`; None before any."""
        return await self.verifier.glance()

    @contextmanager
    def call(self, session: str, *, blocked: bool) -> Iterator[None]:
        """Account one call of an agent session (`blocked`: a foreground call that waits on
        the environment); the session is `CALLER_SESSION` meanwhile."""
        token = CALLER_SESSION.set(session)
        try:
            with self.accounting.call(session, blocked=blocked):
                yield
        finally:
            CALLER_SESSION.reset(token)
            if self.verify is not None and not self._noting_time:
                # Written once the answer has gone (a write transaction, the report's model
                # and its JSON were 0.3-0.5 ms of each call's answer), and at most once a
                # NOTE_TIME_SECONDS (it was once a call, in the host's own process beside the
                # next calls): another process's `habitat status` reads it; calls meanwhile
                # are in the one report written.
                self._noting_time = True
                wait = self._noted_at + NOTE_TIME_SECONDS - time.monotonic()
                self.shell.after_answers(self._note_time, not_before=wait)

    async def _note_time(self) -> None:
        self._noting_time = False
        self._noted_at = time.monotonic()
        if self.verify is not None:
            self.records.note_time(self.accounting.report())

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        workspace: Workspace,
        *,
        project: Path | None = None,
        config: ShellConfig | None = None,
        runner: bool = True,
        spawner: Spawner | None = None,
        clock: Clock | None = None,
        handed: Handed | None = None,
    ) -> AsyncIterator[Habitat]:
        """Build the services over the workspace's state; they close in reverse on exit.

        `project` is opened at start (source `flag`); without it the git work tree of the
        workspace root is (source `cwd`), else no project is open. `config` defaults to the
        project's `[tool.habitat]` with `HABITAT_*` overrides; a bad key fails here, naming
        it. Runs an earlier habitat left are adopted; background runs outlive this one.
        `runner=False` serves no verify runner (a one-shot CLI command: no file watcher for
        one command, nor a prestarted wrapper for a next run it will not make); verify status
        then comes from the workspace's record. `spawner` and
        `clock` are the shell's (real processes and the system's clock by default;
        `agent_habitat.testing.open_fake_habitat` passes fakes). `handed`: a run this
        process started before (`shell.quiet_run`), for `shell.follow_handed`.
        """
        # The shell and the edit verbs load here, not with this module: a one-shot verify
        # (`VerifyRecord.open`) builds neither.
        from .files import FileEditor
        from .shell import Shell

        async with AsyncExitStack() as stack:
            core = _Core.build(stack, workspace, project, config)
            db, bus, opened = core.db, core.bus, core.project
            shell = await stack.enter_async_context(
                Shell.open(
                    workspace,
                    core.config,
                    db=db,
                    bus=bus,
                    project_root=opened.root,
                    spawner=spawner,
                    clock=clock,
                    prestart=runner,
                    handed=handed,
                )
            )

            async def follow(root: Path) -> None:
                shell.set_project_root(root)

            opened.on_change(follow)
            files = FileEditor(lambda: opened.root, bus)
            if runner:
                verifier = core.verifier
                tg = await stack.enter_async_context(_background())
                await tg.start(verifier.serve, opened.root)
                opened.on_change(verifier.switch)

                def stale_at_once(paths: Sequence[Path]) -> None:
                    if verifier.runner is not None:
                        verifier.runner.mark_changed(paths)

                files.on_change = stale_at_once
            yield cls(
                workspace=workspace,
                config=core.config,
                db=db,
                journal=core.journal,
                bus=bus,
                project=opened,
                shell=shell,
                files=files,
                trust=core.trust,
                _core=core,
            )


@dataclass(eq=False, kw_only=True)
class _Core:
    """What every habitat process builds over a workspace's state, the shell aside. The
    verify parts (record, accounting, slot) are built on first use: a one-shot shell command
    uses none of them, and their models cost it a fifth of its CPU (issue 25). The runner's
    configuration is read here all the same, so a bad key fails every command at start."""

    workspace: Workspace
    config: ShellConfig
    db: Database
    journal: SqliteJournal
    bus: EventBus
    project: Project
    trust: ProjectTrust
    idle_seconds: float

    @functools.cached_property
    def records(self) -> EpochRecords:
        from .verify.runner.record import EpochRecords

        return EpochRecords(self.db)

    @functools.cached_property
    def accounting(self) -> TimeAccounting:
        from .verify.runner.accounting import TimeAccounting

        return TimeAccounting(self.idle_seconds)

    @functools.cached_property
    def verifier(self) -> VerifySlot:
        from .verify.runner.slot import VerifySlot

        return VerifySlot(
            bus=self.bus,
            project=self.project,
            workspace=self.workspace,
            records=self.records,
            accounting=self.accounting,
            trust=self.trust,
        )

    @classmethod
    def build(
        cls,
        stack: AsyncExitStack,
        workspace: Workspace,
        project: Path | None,
        config: ShellConfig | None,
    ) -> _Core:
        start_root = existing_dir(project) if project is not None else None
        config = config or load_shell_config(start_root or workspace.root)
        workspace.ensure()
        stack.push_async_callback(_release_warm, workspace)
        db = Database(workspace.db_path)
        stack.callback(db.close)
        journal = SqliteJournal(db, config.journal_limit)
        bus = InMemoryEventBus(workspace.label, journal)
        opened = Project.at_start(bus, project, workspace.root)
        return cls(
            workspace=workspace,
            config=config,
            db=db,
            journal=journal,
            bus=bus,
            project=opened,
            trust=ProjectTrust(bus),
            idle_seconds=load_runner_config(opened.root).idle_seconds,
        )


@dataclass(eq=False, kw_only=True)
class VerifyRecord:
    """A one-shot verify's habitat: the workspace's state, bus, project, trust and its record
    of verify, without the shell (no tab, run or wrapper: a verify starts none, and loading
    the shell cost a one-shot about 50 ms of CPU before its first rung)."""

    bus: EventBus
    project: Project
    trust: ProjectTrust
    verifier: VerifySlot

    @classmethod
    @asynccontextmanager
    async def open(
        cls, workspace: Workspace, *, project: Path | None = None
    ) -> AsyncIterator[VerifyRecord]:
        """As `Habitat.open(workspace, project=project, runner=False)`, less the shell."""
        async with AsyncExitStack() as stack:
            core = _Core.build(stack, workspace, project, None)
            yield cls(bus=core.bus, project=core.project, trust=core.trust, verifier=core.verifier)


async def _release_warm(workspace: Workspace) -> None:
    # A warm daemon stops with the habitat process that owns it (verify/rungs/dmypy.py,
    # verify/rungs/warm_pytest.py, verify/rungs/warm_checker.py).
    dmypy = (workspace.state_dir / "dmypy" / "status.json").exists()
    pytest = (workspace.state_dir / "pytest-warm" / "status.json").exists()
    checker = any((workspace.state_dir / "checker-warm").glob("*.json"))
    if not (dmypy or pytest or checker):
        return  # the common case, without loading the ladder
    from .verify.rungs import dmypy as dmypy_daemon
    from .verify.rungs import warm_checker, warm_pytest

    with anyio.CancelScope(shield=True), anyio.move_on_after(5):
        if checker:
            await warm_checker.release(workspace)
        if pytest:
            await warm_pytest.release(workspace)
        if dmypy:
            await dmypy_daemon.release(workspace)


@asynccontextmanager
async def _background() -> AsyncIterator[anyio.abc.TaskGroup]:
    """A task group for services that run beside the caller, cancelled when the block ends;
    an error of the caller's reaches it as itself, not wrapped in an exception group."""
    try:
        async with anyio.create_task_group() as tg:
            try:
                yield tg
            finally:
                tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
