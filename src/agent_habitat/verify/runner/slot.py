"""The habitat's place for the verify runner: open on the project, re-opened when it changes.

`VerifyRunner.open` is a context with its own task group, so it must be entered and left
in one task: `VerifySlot.serve` is that task. A project switch asks it to close the runner
on the old root and open one on the new root, and returns once the new one serves (so the
listeners after it — the MCP tool list — see it). Every epoch change is written to the
workspace's record (`EpochRecords`) for processes without a runner, and the runner's
epochs are relayed to whoever listens (the `habitat://verify/epoch` resource).
"""

from __future__ import annotations

import contextvars
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import anyio.to_thread

from ...errors import HabitatError, NotFoundError, UsageError
from ...events import Event, EventBus
from ...project import Project
from ...project_scene import EpochGlance
from ...trust import NOT_TRUSTED, ProjectTrust
from ...workspace import Workspace
from .. import LadderRequest, LadderResult, RungStatus, Snapshot, VerifyEpoch
from ..snapshot import changed_between
from ..toolchains import snapshot_of
from .accounting import TimeAccounting
from .args import Progress, VerifyRunArgs
from .as_of_now import LISTED_PATHS, as_of_now, never_verified
from .cancel_text import NOTHING_SERVES
from .record import EpochRecords
from .report import (
    EpochReport,
    VerifyCancelResult,
    VerifyRunResult,
    VerifyStatusResult,
    epoch_report,
)
from .text import epoch_summary

if TYPE_CHECKING:
    from .recorder import BackgroundRecorder
    from .runner import VerifyRunner
    from .warmup import WarmUp

__all__ = ["EPOCH_EVENT_KINDS", "REACHED_THROUGH", "VerifySlot"]

logger = logging.getLogger(__name__)

EPOCH_EVENT_KINDS = frozenset(
    {
        "verify.epoch.started",
        "verify.epoch.stale",
        "verify.epoch.fresh",
        "verify.epoch.finished",
        "environment.task.queued",
        "environment.task.started",
        "environment.task.completed",
        "environment.task.failed",
        "environment.task.cancelled",
        "environment.task.died",
    }
)
"""The events that change an epoch's state (or a rung's); `progress` does not."""

REACHED_THROUGH: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "REACHED_THROUGH", default=None
)
"""The process in between that passed the call being served on to this one (the stdio
bridge), set by the way in it came: `served_by` names both, as a client sees them."""


class VerifySlot:
    """Holds the runner of the open project (`runner`, None while no project is open)."""

    def __init__(
        self,
        *,
        bus: EventBus,
        project: Project,
        workspace: Workspace,
        records: EpochRecords,
        accounting: TimeAccounting,
        trust: ProjectTrust | None = None,
    ) -> None:
        self.bus = bus
        self.trust = trust or ProjectTrust(bus)
        self.project = project
        self.workspace = workspace
        self.records = records
        self.accounting = accounting
        self.serves_as = "this process"
        """What this process is to a caller, in `served_by` (the host: `the workspace host`;
        to a client that launched it, `this process` is the one it talks to)."""
        self.runner: VerifyRunner | None = None
        self.warmup: WarmUp | None = None
        """The open project's warm-up (the runner's first climb waits for it)."""
        self.recorder: BackgroundRecorder | None = None
        """The open project's background recording of test dependencies (after the warm-up)."""
        self._recording: VerifyRunner | None = None
        self.error: str | None = None
        """Why no runner serves the open project (e.g. its configuration is bad)."""
        self._next: Path | None = None
        self._switch = anyio.Event()
        # Each switch waits on an event of its own: one shared event, replaced by a second
        # switch that came while the first was under way, left the first caller waiting for
        # ever (issue 23: project_open calls that got no answer under concurrent callers).
        self._asked: list[anyio.Event] = []
        """The switches asked for since the loop last took `_next`."""
        self._taken: list[anyio.Event] = []
        """The switches the root being opened now answers."""

    async def serve(
        self,
        root: Path | None,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Run until cancelled. A runner that cannot open at start fails the start."""
        unsubscribe = self.bus.subscribe(self._on_event)
        started = False
        try:
            while True:
                self._switch = anyio.Event()
                self._taken, self._asked = self._taken + self._asked, []
                if root is None:
                    self._ready()
                    if not started:
                        task_status.started()
                        started = True
                    await self._switch.wait()
                else:
                    try:
                        await self._serve_on(root, self._switch, started, task_status)
                    except HabitatError as exc:
                        if not started:
                            raise
                        # A later switch to a project with bad configuration: the habitat
                        # goes on; verify says why it cannot run.
                        self.error = f"no verify runner on {root}: {exc}"
                        self._ready()
                        await self._switch.wait()
                    started = True
                root = self._next
        finally:
            unsubscribe()

    async def _serve_on(
        self,
        root: Path,
        switch: anyio.Event,
        started: bool,
        task_status: anyio.abc.TaskStatus[None],
    ) -> None:
        from .give_way import GiveWay
        from .recorder import BackgroundRecorder
        from .runner import VerifyRunner  # the ladder and grimp, only when it runs
        from .warmup import WarmUp

        try:
            async with VerifyRunner.open(
                root,
                bus=self.bus,
                workspace=self.workspace,
                accounting=self.accounting,
                last_epoch=self.records.last_number,
            ) as runner:
                # The ladder warms in the background; a climb waits only until its steps
                # are under way, and each rung only for the step it uses (warmup.py).
                recorder = BackgroundRecorder(
                    bus=self.bus, memo=runner.memo, substrates=runner.substrates
                )
                warm = WarmUp(
                    root,
                    workspace=self.workspace,
                    bus=self.bus,
                    memo=runner.memo,
                    trusted=lambda: self.trust.wait(root),
                    quiet=recorder.quiet,
                    give_way=GiveWay(self.bus),
                )
                runner.warm = warm
                self.warmup = warm
                self.recorder = recorder
                self.runner = self._recording = runner
                self.error = None
                self.records.serve(root)
                try:
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(_warm_then_record, warm, recorder)
                        self._ready()
                        if not started:
                            task_status.started()
                        await switch.wait()
                        tg.cancel_scope.cancel()
                finally:
                    self.runner = None
                    self.recorder = None
        finally:
            # Only now: a chain the closing runner cancelled has been recorded as cancelled.
            self._recording = None
            self.records.unserve()

    async def switch(self, root: Path) -> None:
        """Serve `root` from now on; returns once its runner serves (or failed to open)."""
        ready = anyio.Event()
        self._next = root
        self._asked.append(ready)
        self._switch.set()
        await ready.wait()

    def _ready(self) -> None:
        """The root the loop took serves: answer every switch that asked for it (or for a
        root an even later switch replaced)."""
        for waiter in self._taken:
            waiter.set()
        self._taken = []

    def _on_event(self, event: Event) -> None:
        runner = self._recording
        if runner is None or event.kind not in EPOCH_EVENT_KINDS or event.task is None:
            return
        chain = event.task.split(".", 1)[0]
        try:
            view = runner.epoch(chain)
            snapshot = runner.snapshot(chain)
        except NotFoundError:
            return  # a task of another runner (an earlier project's)
        if view is None:
            return
        self.records.save(runner.root, self.records.report(view, runner.root), snapshot)

    # ---- the verbs' services ----------------------------------------------------------

    def require(self) -> VerifyRunner:
        """The runner, or a UsageError saying why there is none and what to do."""
        if self.runner is not None:
            return self.runner
        if self.error is not None:
            raise UsageError(self.error)
        if self.project.root is None:
            raise UsageError("no project is open: open one with project_open, then verify")
        raise UsageError(
            "no verify runner in this process: verify runs where the workspace is served "
            "(habitat mcp); `habitat verify` runs the ladder in the foreground"
        )

    async def run(self, args: VerifyRunArgs, progress: Progress | None = None) -> VerifyRunResult:
        """Queue a verify of the tree as it is now (and wait for it with `wait`)."""
        runner = self.require()
        # A verify asked for is the user asking for the project's code to run (trust.py).
        await self.trust.grant(runner.root, "verify")
        request = LadderRequest(
            policy=args.policy, rungs=args.rung, files=args.files, filter=args.filter
        )

        async def per_rung(done: float, total: float | None, message: str) -> None:
            if progress is not None:
                # Half a step while a rung runs: the value grows on every rung start and end.
                running = 0.5 if message.endswith(" running") else 0.0
                rungs = f"({int(done)}/{int(total or 0)} rungs done)"
                await progress(done + running, f"{message} {rungs}")

        ticket = await runner.request(
            request, wait=args.wait, progress=per_rung if progress is not None else None
        )
        report = self.records.report(ticket.result, runner.root) if ticket.result else None
        summary = (
            epoch_summary(report)
            if report is not None
            else f"{ticket.state}: epoch {ticket.epoch} ({ticket.task}); verify_status to follow it"
        )
        return VerifyRunResult(
            task=ticket.task,
            epoch=ticket.epoch,
            snapshot=ticket.snapshot,
            state=report.state if report is not None else ticket.state,
            green=bool(report and report.green),
            summary=summary,
            coalesced=ticket.coalesced,
            superseded=ticket.superseded,
            result=report,
        )

    async def status(
        self, task: str | None = None, session: str | None = None
    ) -> VerifyStatusResult:
        """Is the code as it is now green? Live from the runner, else from the record; a
        project not trusted yet says so (nothing of it has run)."""
        result = await self._status(task, session)
        root = self.project.root
        if root is not None and task is None:
            trust = await self.trust.state(root)
            if not trust.trusted:
                result.trusted = False
                result.summary = (
                    trust.summary
                    if result.epoch is None
                    else f"{NOT_TRUSTED} now; {result.summary}"
                )
        return result

    async def _status(self, task: str | None, session: str | None) -> VerifyStatusResult:
        runner = self.runner
        if runner is None:
            if self.project.root is None:
                raise UsageError("no project is open: open one with project_open")
            return await self._recorded(self.project.root, task)
        status = await runner.status(task, session=session)
        if status.epoch is None and task is None:  # what it climbed; before it: on record
            earlier = await self._recorded(runner.root, None)
            if earlier.epoch is not None:
                update = {"served_by": self._served_by(), "recorded": False}
                return earlier.model_copy(update=update)
        report = self.records.report(status.epoch, runner.root) if status.epoch else None
        return VerifyStatusResult(
            green=status.green,
            summary=epoch_summary(report),
            stale=status.stale,
            changed=status.changed[:LISTED_PATHS],
            current_snapshot=status.current_snapshot,
            running=status.running,
            queued=status.queued,
            epoch=report,
            time=status.time,
            served_by=self._served_by(),
        )

    def _served_by(self) -> str:
        here = f"{self.serves_as} (pid {os.getpid()})"
        via = REACHED_THROUGH.get()
        return f"{here}, reached through {via}" if via else here

    async def _recorded(self, root: Path, task: str | None) -> VerifyStatusResult:
        record = self.records.latest(root, task)
        servers = [s for s in self.records.servers() if s.root == str(root)]
        served_by = servers[0].describe() if servers else None
        time = servers[0].time if servers else None
        current = await anyio.to_thread.run_sync(snapshot_of, root)
        if record is None:
            if task is not None:
                raise NotFoundError(f"no verify task {task!r} recorded for {root}")
            return VerifyStatusResult(
                green=False,
                summary=never_verified(root),
                stale=False,
                current_snapshot=current.id,
                served_by=served_by,
                recorded=True,
                time=time,
            )
        report = record.report.model_copy(deep=True)
        old = record.snapshot
        changed: list[str] | None = None
        if old is not None:
            changed = []
            if old.id != current.id:
                changed = await anyio.to_thread.run_sync(changed_between, root, old, current)
        as_of_now(report, changed, served=bool(servers))
        return VerifyStatusResult(
            green=report.green,
            summary=epoch_summary(report),
            stale=report.stale,
            changed=report.changed,
            current_snapshot=current.id,
            epoch=report,
            time=time,
            served_by=served_by,
            recorded=True,
        )

    async def cancel(self, task: str | None = None) -> VerifyCancelResult:
        runner = self.runner
        if runner is None and self.project.root is not None:
            servers = [s for s in self.records.servers() if s.root == str(self.project.root)]
            if servers:
                raise UsageError(
                    f"verify for {self.project.root} is served by {servers[0].describe()}; "
                    "this process cannot reach it until the host lands: cancel there "
                    "(verify_cancel, or the /cancel prompt)"
                )
            return VerifyCancelResult(cancelled=False, summary=NOTHING_SERVES)
        runner = self.require()
        view = await runner.cancel(task)
        if view is None:
            where = (
                f"task {task} already finished" if task else "no verify run is queued or running"
            )
            return VerifyCancelResult(cancelled=False, summary=f"nothing to cancel: {where}")
        report = epoch_report(view, runner.root)
        return VerifyCancelResult(
            cancelled=True,
            summary=epoch_summary(report),  # "cancelled on S: epoch N (task); ..."
            epoch=report,
        )

    async def record_foreground(
        self, request: LadderRequest, result: LadderResult, queued_at: float
    ) -> EpochReport:
        """Record a climb run in the foreground (`habitat verify`, no runner) as an epoch, so
        `habitat status` and the servers' status see it. A tree that moved while it ran makes
        it stale at once."""
        root = self.project.root
        assert root is not None, "a foreground climb runs on the open project"
        view = VerifyEpoch(
            epoch=self.records.last_number(root) + 1,
            task=result.id,
            state=result.state,
            verified_state=result.state,
            snapshot=result.snapshot,
            head=result.head,
            policy=result.policy,
            request=request,
            touched=result.touched,
            rungs=[
                RungStatus(
                    rung=r.rung,
                    task=r.task,
                    state=r.state,
                    reason=r.reason,
                    tool=r.tool,
                    duration_s=r.duration_s,
                    notes=r.notes,
                )
                for r in result.rungs
            ],
            queued_at=queued_at,
            started_at=queued_at,
            finished_at=time.time(),
            duration_s=result.duration_s,
            result=result,
        )
        report = self.records.report(view, root)
        after = await anyio.to_thread.run_sync(snapshot_of, root)
        snapshot: Snapshot | None = after
        if after.id != result.snapshot:
            # Which files moved is unknown without the climb's own hashes: stale, never green.
            snapshot = None
            report.stale, report.green = True, False
            report.changed, report.changed_count = ["(files changed while it ran)"], 1
            if report.state not in ("cancelled", "error"):
                report.state = "stale"
        self.records.save(root, report, snapshot)
        return report

    async def glance(self) -> EpochGlance | None:
        """The current epoch at a glance (project_scene); None before any or without a project."""
        if self.project.root is None:
            return None
        try:
            status = await self.status()
        except HabitatError as exc:
            logger.info("no verify glance: %s", exc)
            return None
        if status.epoch is None:
            return None
        return EpochGlance(
            task=status.epoch.task,
            state=status.epoch.state,
            snapshot=status.epoch.snapshot,
            stale=status.stale,
            current_snapshot=status.current_snapshot,
        )


async def _warm_then_record(warm: WarmUp, recorder: BackgroundRecorder) -> None:
    """The warm-up, then — only if it went through every step, so whatever holds the
    warm-up back holds this back too — the background recording of test dependencies. The
    recorder hears verify requests from the start: one asked during the warm-up (a climb
    no longer waits for it) holds the recording back until it is done."""
    with recorder.listening():
        await warm.run()
        if warm.reached is not None:
            await recorder.run(warm.reached)
