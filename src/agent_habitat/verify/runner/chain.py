"""One verify chain as the runner drives it: its epoch, cancel scope, processes, substrates,
and the bus it hands the climb (which tags every task event with the epoch and tells the
chain which rung is running)."""

from __future__ import annotations

import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from ...events import Event, EventBus, EventKind, Subscriber, Unsubscribe
from ...proc import ProcessRecord, kill_tree
from ..hooks import LadderHooks, WarmSteps
from ..models import LadderResult, RungName, RungResult
from ..select.memo import SelectionMemo
from ..snapshot import Snapshot
from .epochs import Epoch, contradicting
from .substrate import Substrate, SubstrateFactory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .models import ProgressSink

__all__ = ["Chain", "ChainBus", "cancelled_result", "error_result"]


# SIGTERM's grace when the runner cancels: the whole tree is gone well within 2 s.
CANCEL_GRACE_S = 0.5


@dataclass
class WriteLog:
    """Writes reported while a request is taking its snapshot or a chain waits to begin
    (the runner clears it when neither is the case, so it stays small)."""

    count: int = 0
    entries: list[tuple[int, list[str]]] = field(default_factory=list)

    def add(self, paths: list[str]) -> None:
        self.count += 1
        self.entries.append((self.count, paths))

    def since(self, count: int) -> list[str]:
        return [path for n, paths in self.entries if n > count for path in paths]


@dataclass
class Chain:
    epoch: Epoch
    deadline: float
    """Time (on the runner's clock) the coalesce window closes: a request before it restarts
    the young climb with the union instead of starting a run of its own."""
    requested_at: float = field(default_factory=time.monotonic)
    """Monotonic time of its first request: the wall a person waits starts here."""
    created_at: float = field(default_factory=time.monotonic)
    """Monotonic time the runner made it (after the first request's snapshot)."""
    restart: bool = False
    """A request joined within the window: the climb under way starts again with the union."""
    restarts: int = 0
    picked_at: float | None = None
    """Monotonic time the runner took it (it queued behind an earlier chain until then)."""
    behind: bool = False
    """An earlier chain was running when it was made: only then is its wait a queue (with
    none, the hop to the runner's task is the runner's own work, counted as prepare)."""
    coalesce_s: float = 0.0
    """Seconds of climbing thrown away by restarts."""
    baseline_s: float = 0.0
    """Seconds of the slot's warm-up before the climb (daemon, HEAD baselines, graph)."""
    done: anyio.Event = field(default_factory=anyio.Event)
    changed: anyio.Event = field(default_factory=anyio.Event)
    """Set (and replaced) whenever a rung starts or ends: progress reporters wait on it."""
    scope: anyio.CancelScope | None = None
    cancel_reason: str | None = None
    processes: dict[str, ProcessRecord] = field(default_factory=dict)
    """Task id → the last process its rung started."""
    after: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    """What its climbs left for after their verdict (the processes of the rungs a climb
    stopped as it ended red, verify/stopping.py): `clean_up` does it."""
    substrates: dict[str, Substrate] = field(default_factory=dict)
    running_test: dict[str, str] = field(default_factory=dict)
    """Task id → the test its substrate last saw start (kept after the folder is gone)."""
    early_changes: set[str] = field(default_factory=set)
    """Paths written after the chain started but before its snapshot was in hand."""
    requested: tuple[Snapshot, int] | None = None
    """The newest request's snapshot and the write log's count when it was taken."""
    writes: int = 0
    """Writes reported to this chain (a comparison with the tree that saw one begin is redone)."""
    rechecking: bool = False
    """True while the tree is compared with its stale epoch's snapshot again."""

    def reusable(self, root: Path, log: WriteLog, watching: bool) -> Snapshot | None:
        """The newest request's snapshot when no write reported since it was taken differs
        from it (blocking: hashes those files). Each snapshot is a git process (tens of ms
        on a busy machine) and a verify needed three; a write the watcher reports late
        marks the epoch stale when it is reported (`mark_changed`), and one to the change's
        own files is caught by the check after the climb (`moved_since`)."""
        if not watching or self.requested is None:
            return None
        snapshot, count = self.requested
        if contradicting(root, snapshot, list(log.since(count))):
            return None
        return snapshot

    @property
    def task(self) -> str:
        return self.epoch.task

    async def settled(self, progress: ProgressSink | None = None) -> None:
        """Return once the chain is done, reporting its progress at each rung meanwhile."""
        if progress is None:
            await self.done.wait()
            return

        async def report() -> None:
            while True:
                await progress(*self.progress())
                await self.changed.wait()

        async with anyio.create_task_group() as tg:
            tg.start_soon(report)
            await self.done.wait()
            tg.cancel_scope.cancel()

    async def reap(self) -> None:
        """The stopped climb's processes are gone before the next one starts: two climbs of
        one workspace never run at once (they would share the substrates and daemons)."""
        with anyio.CancelScope(shield=True):
            for record in list(self.processes.values()):
                await kill_tree(record, signal.SIGTERM, CANCEL_GRACE_S)
        await self.clean_up()

    async def clean_up(self) -> None:
        """What the climbs left for after their verdict, done (the runner's next climb
        starts after it; shielded: the processes must not outlive the chain)."""
        with anyio.CancelScope(shield=True):
            while self.after:
                await self.after.pop(0)()

    def kill_soon(self, tg: anyio.abc.TaskGroup) -> None:
        """Kill the climb's process trees in `tg`, faster than the climb's own kill (2 s of
        grace): the tree is gone well within 2 s."""
        for record in list(self.processes.values()):
            tg.start_soon(kill_tree, record, signal.SIGTERM, CANCEL_GRACE_S)

    def forget_climb(self, spent: float) -> None:
        """A request within the window stopped the climb: its `spent` seconds count as
        coalescing, and what it found is forgotten before the climb starts again."""
        self.coalesce_s += spent
        self.baseline_s = 0.0
        self.restarts += 1
        epoch = self.epoch
        epoch.results.clear()
        epoch.stale, epoch.changed = False, set()
        self.processes.clear()
        self.early_changes.clear()
        epoch.notes = [
            f"coalesced: {len(epoch.requests)} requests within the window; the climb started "
            f"again with their union ({self.restarts} time{'s' if self.restarts > 1 else ''})"
        ]

    def touch(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def progress(self) -> tuple[float, float, str]:
        rungs = list(self.epoch.rungs.values())
        done = sum(1 for r in rungs if r.state not in ("waiting", "running"))
        current = self.epoch.current_rung
        message = f"{current} running" if current else self.epoch.state
        return float(done), float(max(len(rungs), 1)), message

    def hooks(
        self,
        snapshot: Snapshot,
        substrates: SubstrateFactory,
        superseded: Callable[[Chain], None],
        memo: SelectionMemo | None = None,
        warm: WarmSteps | None = None,
    ) -> LadderHooks:
        """The climb's hooks: collect results and processes, lend substrates, and stop the
        climb after `diagnose.files` once a newer request superseded it."""
        chain = self

        def rung_finished(result: RungResult) -> None:
            if result.state == "cancelled" and chain.cancel_reason:
                result.reason = chain.cancel_reason
            chain.epoch.rung_finished(result)
            if (
                result.rung == "diagnose.files"
                and chain.epoch.superseded_by
                and chain.cancel_reason is None
            ):
                superseded(chain)

        def process_started(task: str, record: ProcessRecord) -> None:
            chain.processes[task] = record
            rung = task.split(".", 1)[1]
            if rung in chain.epoch.rungs:
                chain.epoch.rungs[rung].pid = record.pid

        @asynccontextmanager
        async def substrate(task: str) -> AsyncIterator[Substrate]:
            async with substrates.lease(task) as lent:
                chain.substrates[task] = lent
                try:
                    yield lent
                finally:
                    if test := lent.current_test():
                        chain.running_test[task] = test
                    chain.substrates.pop(task, None)

        return LadderHooks(
            ladder_id=chain.task,
            snapshot=snapshot,
            rung_finished=rung_finished,
            process_started=process_started,
            substrate=substrate,
            memo=memo,
            warm=warm,
            after=chain.after,
        )


class ChainBus:
    """The climb's view of the bus: task events gain `epoch`, died events the test."""

    def __init__(self, bus: EventBus, chain: Chain) -> None:
        self.bus = bus
        self.chain = chain

    def publish(
        self,
        kind: EventKind,
        *,
        tab: str | None = None,
        task: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> Event:
        data = dict(data or {})
        data["epoch"] = self.chain.epoch.number
        rung = data.get("rung")
        if kind == "environment.task.started" and isinstance(rung, str):
            self.chain.epoch.rung_started(rung)  # type: ignore[arg-type]
        if kind == "environment.task.died" and task is not None:
            data["test"] = self.chain.running_test.get(task)
        event = self.bus.publish(kind, tab=tab, task=task, data=data)
        if kind.startswith("environment.task."):
            self.chain.touch()
            if kind == "environment.task.started" and isinstance(rung, str):
                done, total, message = self.chain.progress()
                self.bus.publish(
                    "environment.task.progress",
                    task=self.chain.task,
                    data={
                        "epoch": self.chain.epoch.number,
                        "current": rung,
                        "done": done,
                        "total": total,
                        "message": message,
                    },
                )
        return event

    def subscribe(self, subscriber: Subscriber) -> Unsubscribe:
        return self.bus.subscribe(subscriber)


def cancelled_result(
    chain: Chain, snapshot: Snapshot, rungs: list[RungName], started: float
) -> LadderResult:
    """What a cancelled climb did: the rungs that finished, the rest not reached."""
    reason = chain.cancel_reason or "cancelled"
    done: dict[RungName, RungResult] = {r.rung: r for r in chain.epoch.results}
    results = [
        done.get(rung)
        or RungResult(
            rung=rung, task=f"{chain.task}.{rung}", state="skipped", reason=f"not reached: {reason}"
        )
        for rung in rungs
    ]
    epoch = chain.epoch
    return LadderResult(
        id=chain.task,
        snapshot=snapshot.id,
        head=snapshot.head,
        policy=epoch.policy or "standard",
        state="cancelled",
        rungs=results,
        touched=epoch.touched,
        duration_s=round(time.monotonic() - started, 3),
    )


def error_result(
    chain: Chain, snapshot: Snapshot | None, reason: str, started: float
) -> LadderResult:
    epoch = chain.epoch
    return LadderResult(
        id=chain.task,
        snapshot=snapshot.id if snapshot else "",
        head=snapshot.head if snapshot else None,
        policy=epoch.policy or "standard",
        state="error",
        rungs=[
            RungResult(rung=r, task=f"{chain.task}.{r}", state="error", reason=reason)
            for r in epoch.rungs
        ][:1],
        touched=epoch.touched,
        duration_s=round(time.monotonic() - started, 3),
    )
