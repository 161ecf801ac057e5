"""Shell: named tabs on the system shell, as services the MCP tools and the CLI call.

State is in `state.db` (`RunStore`, read through `Tabs`); how runs end is the
`RunSupervisor`'s job; a run's spool keeper is `SpoolKeeping`'s. Processes are started
through a `Spawner` and time comes from a `Clock`, both injected (the real ones by
default). A shell that opens over the state of an earlier one adopts its runs that are
still alive and records the end of the others, so nothing is silently dropped.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal as signal_module
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from ..clock import SYSTEM_CLOCK, Clock
from ..config import ShellConfig
from ..errors import HabitatError, NotFoundError, UsageError
from ..events import EventBus
from ..proc import parse_signal
from ..proc.spawner import ProcessHandle, ProcSpawner, Spawner
from ..proc.spool_hole import prepare
from ..secrets import remember_typed
from ..store import Database
from ..workspace import Workspace
from . import run_folders, views
from .environment import command_env
from .follow import Follower
from .lull import Lull
from .models import (
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
from .output import compile_pattern
from .prestarts import Prestarts, Ready
from .run_store import NewRun, RunRow, RunStore, busy_error, start_error
from .scene import SceneBuilder, SharedBuild
from .shells import ShellInfo, resolve_shell
from .spool_keeping import SpoolKeeping
from .stdin_input import send_input
from .supervisor import RunSupervisor
from .tabs import Tabs
from .waiting import Progress
from .wrapper import joins_group, wrapper_argv

if TYPE_CHECKING:
    from .quiet_run import Handed

__all__ = ["Shell"]

Keeping = Callable[[RunStore, ShellConfig, Spawner, TaskGroup], SpoolKeeping]
"""What builds a shell's `SpoolKeeping` (the class itself, unless a test passes its own)."""


class Shell:
    """The shell tabs of one workspace; built by `Habitat.open`, reached as `habitat.shell`."""

    def __init__(
        self,
        workspace: Workspace,
        config: ShellConfig,
        db: Database,
        bus: EventBus,
        task_group: TaskGroup,
        project_root: Path | None,
        *,
        spawner: Spawner | None = None,
        clock: Clock | None = None,
        keeping: Keeping = SpoolKeeping,
        prestart: bool = True,
    ) -> None:
        self.workspace = workspace
        self.config = config
        self.db = db
        self.bus = bus
        self.spawner: Spawner = spawner or ProcSpawner()
        self.clock: Clock = clock or SYSTEM_CLOCK
        self.store = RunStore(db, self.clock)
        self._lull = Lull(task_group)
        db.checkpoint_apart(lambda: self._lull.in_thread(db.checkpoint))
        self.runs = RunSupervisor(
            self.store,
            bus,
            self.spawner,
            self.clock,
            task_group,
            config.kill_grace_seconds,
            config.long_run_nice,
            self._lull,
        )
        self.tabs = Tabs(self.store, self.runs, config, self.spawner, self.clock, project_root)
        self._keeping = keeping(self.store, config, self.spawner, task_group)
        self.prestarts = Prestarts(self.spawner, task_group, workspace.spool_dir, prestart)
        """Each tab's next wrappers, started once its last run has answered."""
        self._tg = task_group
        self._follower = Follower(self.tabs, self.runs, self._keeping, self.clock, task_group)
        self._scene = SharedBuild(task_group, SceneBuilder(self.tabs).build)

    def _adopt_all(self, handed: Handed | None = None) -> None:
        if handed is not None:  # this process's own run, not one to adopt
            self.runs.hold(handed.run.id, handed.process)
        self.prestarts.sweep()  # the folders made ahead by habitat processes now gone
        run_folders.sweep(self.workspace.spool_dir)  # and those a dying one was removing
        self.runs.adopt_all()
        for run in self.store.running():
            if handed is None or run.id != handed.run.id:
                self._keeping.adopted(run)

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        workspace: Workspace,
        config: ShellConfig,
        *,
        db: Database,
        bus: EventBus,
        project_root: Path | None,
        spawner: Spawner | None = None,
        clock: Clock | None = None,
        keeping: Keeping = SpoolKeeping,
        prestart: bool = True,
        handed: Handed | None = None,
    ) -> AsyncIterator[Shell]:
        """Open the tabs over the workspace's state; adopts runs an earlier shell left.

        The database and bus belong to the composition root (`agent_habitat.Habitat.open`),
        which builds them once for every service of the workspace. `spawner` and `clock`
        default to real processes and the system's clock (`agent_habitat.testing` has fakes).
        `prestart=False`: no tab's next wrapper starts ahead (a one-shot command makes no
        next run). `handed`: a run this process started before opening (`shell.quiet_run`),
        which `follow_handed` takes on; it is not adopted.
        """
        try:
            async with anyio.create_task_group() as tg:
                shell = cls(
                    workspace,
                    config,
                    db,
                    bus,
                    tg,
                    project_root,
                    spawner=spawner,
                    clock=clock,
                    keeping=keeping,
                    prestart=prestart,
                )
                shell._adopt_all(handed)
                try:
                    yield shell
                finally:
                    # Background runs go on without us: only our watchers stop.
                    shell.prestarts.close()
                    shell.runs.release_groups()
                    shell._keeping.close()
                    tg.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # The caller's own error, not a group of ours: let `except HabitatError` see it.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise

    # project and defaults
    @property
    def project_root(self) -> Path | None:
        return self.tabs.project_root

    def default_cwd(self) -> str:
        """Open project root → its git root → this process's cwd."""
        return self.tabs.default_cwd()

    def set_project_root(self, path: Path) -> None:
        """Switch the project; tabs still at the old default cwd follow to the new one."""
        self.tabs.set_project_root(path)

    def after_answers(self, job: Callable[[], Awaitable[None]], not_before: float = 0.0) -> None:
        """Do `job` once no run is being answered (`Lull.later`), `not_before` seconds from
        now at the earliest: what a call's end records that nobody reads before its answer."""
        self._lull.later_after(not_before, job)

    # verbs
    async def run(self, args: RunArgs, progress: Progress | None = None) -> RunResult:
        """Run a command in a tab: foreground (default), background, or yield after a while."""
        if not args.command.strip():
            raise UsageError("command is empty; pass the shell command line to run")
        with self._lull.answer():
            result = await self._run_answered(args, progress)
        if self.prestarts.enabled:
            # The tab's next wrappers start once nothing is being answered, for the tab as it
            # stands then (the run may have moved it: cd, export); apart, so that the run's
            # end is written meanwhile, not by the next call.
            self._lull.apart(lambda: self._prepare_next(args.tab))
        return result

    async def _run_answered(self, args: RunArgs, progress: Progress | None) -> RunResult:
        remember_typed(args.command, args.env)
        tab = self.store.tab(args.tab)
        shell = resolve_shell(args.shell or (tab.shell if tab else None))
        cwd = self.tabs.resolve_cwd(tab, args.cwd)
        env = command_env(tab.env if tab else None, args.env)
        if tab is not None and (busy := self.runs.running(args.tab)) is not None:
            raise busy_error(busy.tab, busy.idx, busy.command)
        ready: Ready | None = None
        if not args.interactive and not self._keeping.pumps(self.workspace.spool_dir):
            ready = await self.prestarts.take(args.tab, shell, cwd, env)
        try:
            return await self._run(args, shell, cwd, env, ready, progress)
        finally:
            if ready is not None:
                self.prestarts.release(ready)  # unless the run took it

    async def _prepare_next(self, tab_name: str) -> None:
        """Prestart the wrapper of the tab's next run, as the tab stands now (unless the one
        it has fits)."""
        tab = self.store.tab(tab_name)
        if tab is None:
            return
        try:
            shell = resolve_shell(tab.shell)
            cwd = self.tabs.resolve_cwd(tab, None)
        except HabitatError:  # the next run says so itself, started cold
            return
        await self.prestarts.prepare(tab_name, shell, cwd, command_env(tab.env, None))

    async def _run(
        self,
        args: RunArgs,
        shell: ShellInfo,
        cwd: str,
        env: dict[str, str],
        ready: Ready | None,
        progress: Progress | None,
    ) -> RunResult:
        opened = self.store.open_run(
            NewRun(
                tab=args.tab,
                command=args.command,
                cwd=cwd,
                shell=shell.executable,
                background=args.background,
                interactive=args.interactive,
                marker=ready.marker if ready else None,
                process=ready.started.process.record if ready else None,
            ),
            spool_dir=self.workspace.spool_dir,
            max_tabs=self.config.max_tabs,
            keep=self.config.history_rows,
        )
        run = opened.run
        self._keeping.discard(opened.stale)  # the folders of runs trimmed from history
        self.runs.starting(run.id)
        try:
            process = self._go(run, ready, args.command) if ready else None
            if process is None:
                process = await self._start(run, shell, args, cwd, env)
        except Exception:  # re-raised: nothing started, so the row and folder go again
            self.runs.not_started(run.id)
            self.store.abandon_run(opened)
            shutil.rmtree(run.run_dir, ignore_errors=True)
            raise
        except BaseException:  # cancelled, or dying: the row stays for the next shell
            self.runs.not_started(run.id)
            raise
        if ready is None or process is not ready.started.process:
            self.store.set_process(run.id, process.record)
        run = dataclasses.replace(run, pid=process.pid)

        announce = self._announcer(args, run, process.pid, opened.opened_tab, shell.kind)
        quick = self._follower.waits_quick(args.background, progress)
        # A run that may end within its first moment is announced then, in its end's commit
        # (or at that moment): its wrapper runs at once, and this process, still busy with a
        # commit, is what it would wait for on a loaded machine.
        self.runs.started(run, process, args.env, announce, now=not quick)
        if not quick:
            self._follower.going(run, process)
        if self.prestarts.pid(args.tab) is None and self.prestarts.idle(args.tab):
            # None waits, none is being started: one starts while this one runs, so that a
            # call right behind this answer (calls back to back, no lull) finds it ready.
            self._tg.start_soon(self._prepare_next, args.tab)
        return await self._follower.follow(
            run, process, args.background, args.timeout_seconds, args.yield_after_seconds, progress
        )

    def _announcer(
        self, args: RunArgs, run: RunRow, pid: int, opened_tab: bool, kind: str
    ) -> Callable[[], None]:
        """What publishes the run's start (and its tab's opening, when it opened it)."""

        def announce() -> None:
            if opened_tab:
                self.bus.publish(
                    "shell.tab.opened", tab=args.tab, data={"shell": kind, "cwd": run.cwd}
                )
            self.bus.publish(
                "shell.run.started",
                tab=args.tab,
                data={
                    "index": run.idx,
                    "command": args.command,
                    "pid": pid,
                    "cwd": run.cwd,
                    "background": args.background,
                },
            )

        return announce

    async def follow_handed(self, args: RunArgs, handed: Handed) -> RunResult:
        """`run` for the foreground run `handed` (`args`) that `shell.quiet_run` started in
        this process before the shell opened, from where it left it: the rest of its first
        moment, then as `_run` follows any run."""
        run, process = self._take(args, handed)
        with self._lull.answer():
            return await self._follower.follow(
                run,
                process,
                args.background,
                args.timeout_seconds,
                args.yield_after_seconds,
                None,
                quick=handed.quick_left,
            )

    async def cancel_handed(self, args: RunArgs, handed: Handed) -> None:
        """Ctrl-C came in the first moment of the run `handed` (see `follow_handed`): its
        tree is killed and it is recorded cancelled, as `_run` does on Ctrl-C."""
        run, _ = self._take(args, handed)
        with anyio.CancelScope(shield=True):
            await self.runs.kill(run, "cancelled")

    def _take(self, args: RunArgs, handed: Handed) -> tuple[RunRow, ProcessHandle]:
        """Take charge of the run `handed`, its start not yet announced (as a quick run's)."""
        run, process = handed.run, handed.process
        self._keeping.discard(handed.stale)
        announce = self._announcer(args, run, process.pid, handed.opened_tab, handed.shell_kind)
        self.runs.started(run, process, args.env, announce, now=False)
        return run, process

    def _go(self, run: RunRow, ready: Ready, command: str) -> ProcessHandle | None:
        """Start the run in its tab's prestarted wrapper: its files, then its folder's name
        on the wrapper's stdin. None when the wrapper is gone (the caller starts cold)."""
        try:
            moved = ready.move_folder(run.run_dir)  # made ahead, else now
            if not moved:
                run_folders.new_folder(run.run_dir)
                prepare(run.files.output)  # what lets its keeper cut it on a full disk
            go = run.files.prepare_prestarted(command, made_ahead=moved)
            os.write(ready.started.go, go)
        except BrokenPipeError:
            return None  # it died waiting (killed by someone): the run starts cold
        except OSError as exc:
            raise start_error(exc, run, f"the run in {run.run_dir}") from exc
        os.close(ready.started.go)
        ready.started.go = -1  # the run's now: `release` leaves it be
        return ready.started.process

    async def _start(
        self, run: RunRow, shell: ShellInfo, args: RunArgs, cwd: str, env: dict[str, str]
    ) -> ProcessHandle:
        """Spawn the run's wrapper, its spool kept; an OSError becomes a HabitatError that
        says what to do."""
        holder: int | None = None
        try:
            run_folders.new_folder(run.run_dir)
            prepare(run.files.output)  # what lets its keeper cut it on a full disk
            holder = await self._keeping.pipe(run)
            process = self.spawner.spawn(
                wrapper_argv(shell, run.run_dir, args.command),
                cwd=Path(cwd),
                env=env,
                output=run.files.output,
                stdin_pipe=args.interactive,
                marker=run.marker,
                identify=False,
                stdout=holder,
                joins_group=joins_group(shell),
            )
        except OSError as exc:
            raise start_error(exc, run, shell.executable) from exc
        finally:
            if holder is not None:
                os.close(holder)  # the command holds its own descriptor now
        if holder is not None:
            self.runs.pumped.add(run.id)
        return process

    async def rerun(self, args: RerunArgs, progress: Progress | None = None) -> RunResult:
        """Run a history entry again (default the last) in the tab's current cwd."""
        self.tabs.get(args.tab)
        old = self.store.by_index(args.tab, args.index)
        if old is None:
            raise NotFoundError(f"tab {args.tab!r} has no run #{args.index}; see `history`")
        return await self.run(
            RunArgs(
                command=old.command,
                tab=args.tab,
                shell=old.shell,
                background=args.background,
                timeout_seconds=args.timeout_seconds,
                yield_after_seconds=args.yield_after_seconds,
            ),
            progress,
        )

    async def kill(self, args: KillArgs) -> KillResult:
        """Kill the whole process tree of the tab's running command."""
        self.tabs.get(args.tab)
        sig = parse_signal(args.signal)
        run = self.runs.running(args.tab)
        name = signal_module.Signals(sig).name
        if run is None:
            # Nothing runs: what ended runs left running (daemons, `cmd &`) is what to stop.
            index, report = await self.runs.kill_leftovers(args.tab, sig)
        elif sig in (signal_module.SIGTERM, signal_module.SIGKILL):
            index, report = run.idx, await self.runs.kill(run, "killed", sig)
        else:
            index, report = run.idx, await self.runs.signal(run, sig)
        return KillResult(
            tab=args.tab,
            index=index,
            killed=index is not None,
            pids=report.pids,
            signal=name,
            remaining=report.remaining,
            tracking=report.tracking,
            untracked=report.untracked,
        )

    async def close(self, args: CloseArgs) -> CloseResult:
        """Kill the tab's command if needed and free the slot (history goes with it)."""
        self.tabs.get(args.tab)
        run = self.runs.running(args.tab)
        if run is not None:
            await self.runs.kill(run, "killed")
        _, left = await self.runs.kill_leftovers(args.tab, signal_module.SIGTERM)
        self.prestarts.discard(args.tab)
        folders = self.store.delete_tab(args.tab)
        # In a worker thread: unlinking a loud run's spool (its freed holes) took ~250 ms of
        # a loaded host's event loop per tab of `yes`, no caller answered meanwhile. Not
        # abandoned on cancel: the rows are gone, so are the folders (renamed first: its
        # keeper, still starting, made `keeper.lock` in it as it went, see run_folders).
        await anyio.to_thread.run_sync(run_folders.remove, folders)
        killed = run is not None or bool(left.pids)
        self.bus.publish("shell.tab.closed", tab=args.tab, data={"killed": killed})
        return CloseResult(
            tab=args.tab, killed=killed, open_tabs=[t.name for t in self.store.tabs()]
        )

    async def input(self, args: InputArgs) -> InputResult:
        """Write text to the stdin of the tab's running interactive command."""
        self.tabs.get(args.tab)
        return await send_input(self.runs, args)

    # read-only verbs live in views.py
    async def scene(self) -> SceneResult:
        return await self._scene.get()

    async def history(self, args: HistoryArgs) -> HistoryResult:
        return views.history(self.tabs, args)

    async def last(self, args: LastArgs) -> LastResult:
        return await views.last(self.tabs, args, compile_pattern(args.grep, "grep"))

    async def which(self, args: WhichArgs) -> WhichResult:
        return await views.which(self.tabs, args)

    async def wait(self, args: WaitArgs, progress: Progress | None = None) -> WaitResult:
        try:
            return await views.wait(self.tabs, args, compile_pattern(args.until, "until"), progress)
        except* HabitatError as group:  # a regex over its budget, raised in the wait's tasks
            raise group.exceptions[0] from None
