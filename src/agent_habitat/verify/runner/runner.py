"""The verify runner: one verify chain per workspace, in the background (DESIGN §5 "Runner").

* `request()` returns at once with the task, epoch and snapshot ids (or waits, with
  `wait=True`). A lone request starts its climb at once: nothing waits for the coalesce
  window. A request arriving within the window of the first one joins its epoch: the young
  climb is stopped (its processes killed) and starts again on the tree as it is now, with
  the union of the requests (files and rungs, the highest policy). A request arriving
  later supersedes the running chain: cancelled at once when it reached
  `compile.project`, after its `diagnose.files` when that still runs. A request the
  running chain already answers (same tree, nothing more asked) joins it, and one that
  arrives while a chain is being superseded queues behind it, merging with any other.
  Two chains never run at once.
* Each run is an epoch bound to its snapshot. The watcher (or `mark_changed`) makes it stale
  the moment a file of the project changes; a result that arrives after the tree moved is
  stale on arrival; `status()` compares with the tree as it is now. Stale is never green.
* Cancel kills the chain's process trees (`proc.kill_tree`) and reports the rung
  `cancelled`; the rungs that finished keep their results.

A core service: no adapter imports. The composition root opens it with `VerifyRunner.open`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
import anyio.to_thread

from ...clock import SYSTEM_CLOCK, Clock
from ...errors import HabitatError, NotFoundError, UsageError
from ...events import EventBus
from ...proc import ProcessRecord
from ...workspace import Workspace
from ..config import load_policy
from ..hooks import LadderFn, WarmSteps
from ..models import LadderRequest, LadderResult, RungName
from ..select.memo import SelectionMemo
from ..snapshot import Snapshot
from ..toolchains import snapshot_of
from .accounting import TimeAccounting
from .chain import Chain, ChainBus, WriteLog, cancelled_result, error_result
from .chain_report import announce, conclude
from .coalesce import covers, idle, merge_requests, rungs_of
from .config import RunnerConfig, load_runner_config
from .epochs import Epoch, VerifyEpoch, moved_since
from .models import ProgressSink, VerifyStatus, VerifyTicket, summary
from .staleness import (
    against_tree,
    mark_stale,
    may_return,
    project_relative,
    recheck,
    start_watcher,
    validated_request,
    written_early,
)
from .substrate import SubstrateFactory

__all__ = ["ProgressSink", "VerifyRunner", "VerifyStatus", "VerifyTicket"]

logger = logging.getLogger(__name__)

_HISTORY = 100


class VerifyRunner:
    """The workspace's verify runner; open it with `VerifyRunner.open(...)`."""

    def __init__(
        self,
        root: Path,
        *,
        bus: EventBus,
        workspace: Workspace | None = None,
        config: RunnerConfig | None = None,
        ladder: LadderFn | None = None,
        accounting: TimeAccounting | None = None,
        clock: Clock = SYSTEM_CLOCK,
        last_epoch: Callable[[Path], int] | None = None,
    ) -> None:
        self.root = root.resolve()
        self._last_epoch = last_epoch
        """The highest epoch number recorded for a root (state.db): numbers go on from it
        across host restarts, and past a foreground climb's, so a higher one is newer."""
        self._clock = clock
        """Times the coalesce window (a test's FakeClock closes it when the test says)."""
        self.bus = bus
        self.workspace = (workspace or Workspace.for_project(self.root)).ensure()
        self.config = config or load_runner_config(self.root)
        self.accounting = accounting or TimeAccounting(self.config.idle_seconds)
        self.substrates = SubstrateFactory(
            self.workspace.substrates_dir, self.config.substrate, self.root
        )
        self._ladder = ladder
        """The climb (`run_ladder` when None: the ladder's modules load at the first one)."""
        self._chains: dict[str, Chain] = {}
        self._pending: Chain | None = None
        self._running: Chain | None = None
        self._numbers = 0
        self._wake = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self.watching = False
        """True while the file watcher runs (stale events within milliseconds of a write)."""
        self._writes, self._requesting = WriteLog(), 0  # for reusing a request's snapshot
        self.memo = SelectionMemo()  # the import graph and test deps, kept between climbs
        self.warm: WarmSteps | None = None  # the slot's warm-up: climbs and rungs wait on it

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        root: Path,
        *,
        bus: EventBus,
        workspace: Workspace | None = None,
        config: RunnerConfig | None = None,
        ladder: LadderFn | None = None,
        watch: bool = True,
        accounting: TimeAccounting | None = None,
        clock: Clock = SYSTEM_CLOCK,
        last_epoch: Callable[[Path], int] | None = None,
    ) -> AsyncIterator[VerifyRunner]:
        """Serve until the block ends; then the running chain is cancelled (tree killed)."""
        runner = cls(
            root,
            bus=bus,
            workspace=workspace,
            config=config,
            ladder=ladder,
            accounting=accounting,
            clock=clock,
            last_epoch=last_epoch,
        )
        unsubscribe = bus.subscribe(runner.accounting.on_event)
        try:
            async with anyio.create_task_group() as tg:
                runner._tg = tg
                if watch:
                    await runner._start_watcher(tg)
                tg.start_soon(runner._serve)
                try:
                    yield runner
                finally:
                    tg.cancel_scope.cancel()
        finally:
            unsubscribe()

    async def _start_watcher(self, tg: anyio.abc.TaskGroup) -> None:
        self.watching = await start_watcher(tg, self.root, self.mark_changed, self.bus)

    # ---- requests -------------------------------------------------------------------------

    def _validated(self, request: LadderRequest) -> LadderRequest:
        if self._tg is None:
            raise UsageError("the verify runner is not serving; open it with VerifyRunner.open")
        return validated_request(self.root, request)

    async def request(
        self,
        request: LadderRequest | None = None,
        *,
        wait: bool = False,
        progress: ProgressSink | None = None,
    ) -> VerifyTicket:
        """Queue a verify of the tree as it is now; see the module docstring for the rules."""
        asked = time.monotonic()
        request = self._validated(request or LadderRequest())
        writes, self._requesting = self._writes.count, self._requesting + 1
        try:
            snapshot = await anyio.to_thread.run_sync(snapshot_of, self.root)
        finally:
            self._requesting -= 1
        superseded: str | None = None
        running = self._running
        if self._pending is not None:
            chain, coalesced = self._pending, True
            chain.epoch.requests.append(request)
        elif running is not None and self._answers(running, request, snapshot):
            chain, coalesced = running, True
            chain.epoch.requests.append(request)
        elif running is not None and self._young(running):
            chain, coalesced = running, True
            chain.epoch.requests.append(request)
            self._restart(running, snapshot, writes)
        else:
            chain, coalesced = self._new_chain(request, asked), False
            if running is not None and running.cancel_reason is None:
                superseded = running.task
                self._supersede(running, chain)
        if chain is self._pending:
            chain.requested = (snapshot, writes)  # _begin takes it if nothing was written
        self.bus.publish(
            "environment.task.queued",
            task=chain.task,
            data={
                "epoch": chain.epoch.number,
                "requests": len(chain.epoch.requests),
                "coalesced": coalesced,
                "superseded": superseded,
            },
        )
        self._wake.set()
        ticket = VerifyTicket(
            task=chain.task,
            epoch=chain.epoch.number,
            snapshot=snapshot.id,
            state=chain.epoch.state,
            coalesced=coalesced,
            superseded=superseded,
        )
        if wait:
            ticket.result = await self.wait(chain.task, progress)
            ticket.state = ticket.result.state
        return ticket

    def _answers(self, running: Chain, request: LadderRequest, snapshot: Snapshot) -> bool:
        epoch = running.epoch
        return (
            running.cancel_reason is None
            and epoch.snapshot is not None
            and epoch.snapshot.id == snapshot.id
            and not epoch.stale
            and covers(epoch.request, request, load_policy(self.root), epoch.touched)
        )

    def _young(self, chain: Chain) -> bool:
        """Still within the coalesce window of its first request, and not on its way out."""
        return (
            chain.cancel_reason is None
            and chain.epoch.superseded_by is None
            and not chain.done.is_set()
            and self._clock.monotonic() < chain.deadline
        )

    def _restart(self, chain: Chain, snapshot: Snapshot, writes: int) -> None:
        """Stop the young climb; `_run` starts it again with every request so far."""
        chain.requested = (snapshot, writes)
        if chain.restart:
            return
        chain.restart = True
        self._stop_climb(chain)

    def _new_chain(self, request: LadderRequest, asked: float) -> Chain:
        recorded = self._last_epoch(self.root) if self._last_epoch is not None else 0
        self._numbers = max(self._numbers, recorded) + 1
        from ..ladder import new_ladder_id  # the ladder's modules: at the first request

        epoch = Epoch(self._numbers, new_ladder_id(), request)
        deadline = self._clock.monotonic() + self.config.coalesce_seconds
        chain = Chain(
            epoch=epoch, deadline=deadline, requested_at=asked, behind=self._running is not None
        )
        self._chains[chain.task] = chain
        self._pending = chain
        for old in list(self._chains)[:-_HISTORY]:
            if self._chains[old].done.is_set():
                del self._chains[old]
        return chain

    def _superseded(self, chain: Chain) -> None:
        self._cancel(chain, f"superseded by {chain.epoch.superseded_by}")

    def _supersede(self, running: Chain, successor: Chain) -> None:
        running.epoch.superseded_by = successor.task
        if running.epoch.current_rung == "diagnose.files":
            return  # it finishes first; the rung hook stops the climb right after
        self._cancel(running, f"superseded by {successor.task}")

    # ---- the chain --------------------------------------------------------------------

    async def _serve(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            while self._pending is not None:
                # No wait for the coalesce window: a request within it restarts the climb.
                chain = self._pending
                self._pending, self._running = None, chain
                chain.picked_at = time.monotonic()
                try:
                    await self._run(chain)
                except Exception:  # the runner's boundary: one broken chain must not end it
                    logger.exception("verify chain %s failed", chain.task)
                    chain.epoch.state = "error"
                    chain.epoch.notes.append("internal error in the runner; see the host log")
                    chain.done.set()
                finally:
                    self._running = None

    async def _begin(self, chain: Chain) -> tuple[Snapshot, LadderRequest, list[RungName]]:
        epoch = chain.epoch
        epoch.state, epoch.started_at = "running", time.time()
        chain.restart = False
        snapshot = chain.reusable(self.root, self._writes, self.watching)
        if self._pending is None and not self._requesting:
            self._writes.entries.clear()
        if snapshot is None:
            snapshot = await anyio.to_thread.run_sync(snapshot_of, self.root)
        default = load_policy(self.root)
        request, notes = merge_requests(epoch.requests, default, snapshot.touched)
        rungs = rungs_of(request, default)
        epoch.request, epoch.policy, epoch.snapshot = request, request.policy, snapshot
        epoch.touched = request.files or snapshot.touched
        epoch.notes.extend(notes)
        epoch.plan(rungs)
        early = await written_early(self.root, chain, snapshot)
        announce(self.bus, chain, snapshot, request, rungs)
        if early:
            self._mark(chain, early, "watch")
        return snapshot, request, rungs

    async def _climb(self, chain: Chain) -> tuple[Snapshot, list[RungName], LadderResult | None]:
        """One climb of the chain: none (None) when it was cancelled or is to restart."""
        snapshot, request, rungs = await self._begin(chain)
        result: LadderResult | None = None
        with anyio.CancelScope() as scope:
            chain.scope = scope
            if chain.cancel_reason is not None or chain.restart:
                scope.cancel()
            if self.warm is not None and not idle(snapshot.touched, request, rungs):
                warm_from = time.monotonic()
                await self.warm.climbable()  # the warm-up under way; each rung waits its step
                chain.baseline_s = time.monotonic() - warm_from
            hooks = chain.hooks(snapshot, self.substrates, self._superseded, self.memo, self.warm)
            ladder = self._ladder
            if ladder is None:
                from ..ladder import run_ladder

                ladder = run_ladder
            result = await ladder(
                self.root,
                request,
                bus=ChainBus(self.bus, chain),
                workspace=self.workspace,
                hooks=hooks,
            )
        chain.scope = None
        return snapshot, rungs, result

    async def _again(self, chain: Chain, attempt: float) -> None:
        """Forget a climb a request within the window stopped; its time counts as coalescing."""
        await chain.reap()
        chain.forget_climb(time.monotonic() - attempt)

    async def _run(self, chain: Chain) -> None:
        started = time.monotonic()
        epoch = chain.epoch
        snapshot: Snapshot | None = None
        result: LadderResult | None = None
        try:
            while True:
                attempt = time.monotonic()
                snapshot, rungs, result = await self._climb(chain)
                if not chain.restart or chain.cancel_reason is not None:
                    break
                await self._again(chain, attempt)
                result = None
            if result is None:
                result = cancelled_result(chain, snapshot, rungs, started)
        except HabitatError as exc:
            epoch.notes.append(str(exc))
            result = error_result(chain, snapshot, str(exc), started)
        except Exception as exc:  # the runner outlives a bug in one climb; the epoch says so
            logger.exception("verify chain %s crashed", chain.task)
            result = error_result(chain, snapshot, f"internal error: {exc!r}", started)
        finally:
            if result is None:  # the runner itself is closing
                chain.cancel_reason = chain.cancel_reason or "the runner closed"
                if snapshot is not None:
                    result = cancelled_result(chain, snapshot, list(epoch.rungs), started)
                    self._finish(chain, result)
                chain.done.set()
                await chain.clean_up()
        if snapshot is not None:  # stale on arrival: the tree may have moved during the climb
            moved = await moved_since(self.root, snapshot, epoch.notes, watching=self.watching)
            self._mark(chain, moved, "on arrival")
        self._finish(chain, result)
        # The stopped rungs' processes, signalled already, reaped once the verdict is out.
        await chain.clean_up()

    def _finish(self, chain: Chain, result: LadderResult) -> None:
        conclude(self.bus, chain, result)

    # ---- cancel, wait, status -----------------------------------------------------------

    def _chain(self, task: str | None) -> Chain | None:
        if task is None:
            return self._running or self._pending or self._newest()
        chain = self._chains.get(task.split(".", 1)[0])  # a rung's task names its chain
        if chain is None:
            raise NotFoundError(f"no verify task {task!r}; verify_status lists the latest one")
        return chain

    def _newest(self) -> Chain | None:
        return next(reversed(self._chains.values()), None)

    def _cancel(self, chain: Chain, reason: str) -> None:
        if chain.done.is_set() or chain.cancel_reason is not None:
            return
        chain.cancel_reason = reason
        if chain is self._pending:
            self._pending = None
            epoch, empty = chain.epoch, Snapshot(id="", head=None)
            epoch.plan(rungs_of(epoch.request, load_policy(self.root)))
            self._finish(chain, cancelled_result(chain, empty, list(epoch.rungs), time.monotonic()))
            return
        self._stop_climb(chain)

    def _stop_climb(self, chain: Chain) -> None:
        if chain.scope is not None:
            chain.scope.cancel()
        if self._tg is not None:
            chain.kill_soon(self._tg)

    async def cancel(self, task: str | None = None) -> VerifyEpoch | None:
        """Cancel `task` (default: running, else queued), wait until its processes are gone;
        None when there was nothing to cancel."""
        chain = self._chain(task)
        if chain is None or chain.done.is_set():
            return None
        self._cancel(chain, "cancelled by request")
        await chain.done.wait()
        return chain.epoch.view()

    async def wait(self, task: str, progress: ProgressSink | None = None) -> VerifyEpoch:
        """Wait for the chain of `task` to finish, reporting progress per rung."""
        chain = self._chain(task)
        assert chain is not None
        await chain.settled(progress)
        return chain.epoch.view()

    def processes(self, task: str) -> dict[str, ProcessRecord]:
        """Rung task id → the last process that rung started (pid, start time, marker)."""
        return dict(chain.processes) if (chain := self._chain(task)) else {}

    def snapshot(self, task: str) -> Snapshot | None:
        """The snapshot (with content hashes) the chain of `task` verifies; None while queued."""
        return chain.epoch.snapshot if (chain := self._chain(task)) else None

    def epoch(self, task: str | None = None) -> VerifyEpoch | None:
        """The epoch of `task` (default: the newest) without looking at the tree."""
        chain = self._chain(task) if task else self._newest()
        return chain.epoch.view() if chain else None

    async def status(self, task: str | None = None, *, session: str | None = None) -> VerifyStatus:
        """The newest epoch (or `task`'s) against the tree as it is now."""
        chain = self._chain(task) if task else self._newest()
        current = await against_tree(self.bus, self.root, chain)
        view = chain.epoch.view() if chain else None
        return VerifyStatus(
            green=bool(view and view.green),
            summary=summary(view),
            current_snapshot=current.id,
            stale=bool(view and view.stale),
            changed=view.changed if view else [],
            epoch=view,
            running=self._running.task if self._running else None,
            queued=self._pending.task if self._pending else None,
            time=self.accounting.report(session),
        )

    # ---- stale -------------------------------------------------------------------------

    def mark_changed(self, paths: Iterable[str | Path]) -> None:
        """Files were written (watcher, or an edit verb at once): epochs whose snapshot they
        contradict go stale (`verify.epoch.stale`). From the loop; paths absolute or relative."""
        relative = project_relative(self.root, paths)
        if not relative:
            return
        restarting = self._running is not None and self._running.restart
        if self._pending is not None or self._requesting or restarting:
            self._writes.add(relative)
        finished = next(
            (c for c in reversed(self._chains.values()) if c.done.is_set() and c.epoch.result),
            None,
        )
        for chain in (self._running, finished):
            if chain is None or (chain is self._running and chain.restart):
                continue  # its next climb takes a snapshot of its own
            if chain.epoch.snapshot is None:
                if chain is self._running:
                    chain.early_changes.update(relative)
                continue
            undo = may_return(chain, relative)
            self._mark(chain, relative, "watch")
            if undo and self._tg is not None:
                self._tg.start_soon(recheck, self.bus, self.root, chain)

    def _mark(self, chain: Chain, paths: list[str], phase: str) -> None:
        mark_stale(self.bus, self.root, chain, paths, phase)
