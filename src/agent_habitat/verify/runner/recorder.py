"""The background recording: per-test dependency data for selection, recorded at idle
priority when a server opens a project whose data is missing or stale, so precise
selection starts from the second edit without anyone running the full suite by hand.

It starts where the warm-up ends (runner/slot.py runs it after `WarmUp.run`, and only when
the warm-up reached its end: whatever keeps the warm-up from running the project's code
keeps this from running its tests too). It runs the tests the data cannot vouch for
(`selection.unrecorded`: all of them the first time) in a fresh pytest with the
`habitat_testdeps` plugin and a substrate of its own, at idle priority (SCHED_IDLE,
nice 19, idle I/O: proc/priority.py), never through the warm pytest (whose forks would
run at its priority).

Any verify request cancels it at once — the bus's `environment.task.queued`, delivered
synchronously from the request — and its process tree is killed in the background, so
the verify does not wait for it (`verify.recording.cancelled` once the tree is gone).
Once no verify is queued or running, and none has been asked for in `QUIET_S`, it plans
again: what the verify's own test runs recorded meanwhile is not recorded twice.

The recording of HEAD's export is paused instead (SIGSTOP to its process group, from the
same synchronous handler) and resumed (SIGCONT) once verify is quiet again: nothing the
user edits can change an export, so its run stays true across any number of verifies,
and it finishes in the gaps between them. Cancelled, a whole-suite run that takes longer
than the gaps never finished (the ladder harness's edits came every ~7 s: the HEAD run
started over each time, and selection stayed on the import graph edit after edit).

While the tree differs from HEAD and the store holds no run of HEAD's content, it first
records the whole suite on an export of HEAD (head.py's `HeadTree`, in a folder of its
own): every later edit is then compared with that clean run, as testmon compares with its
recording run, not only with runs of earlier edits (whose import-time differences would
stop them vouching). Only the tests that passed there are kept from it. It runs only
where every package imports from the export (checked
first); otherwise it is skipped for that HEAD and the note says why.
Events: `verify.recording.started|finished|cancelled`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import signal
import time
from collections.abc import Iterator
from functools import partial

import anyio
import anyio.to_thread

from ...events import Event, EventBus
from ...proc import ProcessRecord
from ..hooks import LadderHooks
from ..models import Selection
from ..toolchains import snapshot_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..layout import Layout
    from ..rungs.context import RungContext
    from ..select.memo import SelectionMemo
    from .substrate import SubstrateFactory

__all__ = ["QUIET_S", "BackgroundRecorder"]

logger = logging.getLogger(__name__)

QUIET_S = 3.0
"""After a verify, how long no request may come before the recording plans again."""
_RECORDED = (0, 1, 5)
"""pytest's exits whose run is a record: passed, tests failed, no tests in what it ran."""
_AT_HEAD = "no recording of HEAD's content (the whole suite, on an export of HEAD)"


class BackgroundRecorder:
    """One project's background recording; `run(ctx)` until cancelled."""

    def __init__(self, *, bus: EventBus, memo: SelectionMemo, substrates: SubstrateFactory) -> None:
        self.bus, self.memo, self.substrates = bus, memo, substrates
        self.state = "idle"
        """`idle`, `planning`, `recording`, `cancelling` (a request came; its processes are
        being killed), `paused` (a request came during the recording of HEAD's export; it
        resumes once verify is quiet), `waiting` (for verify to finish), `done` (nothing to
        record)."""
        self.runs = 0
        """Recordings that completed."""
        self.cancels = 0
        """Recordings a verify request cancelled."""
        self.pauses = 0
        """Times a verify request paused the recording of HEAD's export."""
        self._group: int | None = None
        """The process group of a running recording of HEAD's export (paused, not cancelled)."""
        self._stopped = anyio.Event()
        """Set while that group is stopped."""
        self.applied: list[str] = []
        """The priority the last recording ran at."""
        self._busy: set[str] = set()
        self._last_request = 0.0
        self._scope: anyio.CancelScope | None = None
        self._wake = anyio.Event()
        self._head_skipped: str | None = None
        """A HEAD whose export could not be recorded (not tried again)."""
        self._listening = 0

    def _on_event(self, event: Event) -> None:
        if event.kind == "environment.task.queued" and event.task:
            self._busy.add(event.task.split(".", 1)[0])
            self._last_request = time.monotonic()
            if self._group is not None:
                self._pause(self._group)
            elif self._scope is not None and not self._scope.cancel_called:
                self._scope.cancel()  # the verify goes first; the kill runs in our task
                self.state = "cancelling"
        elif event.kind == "project.trusted" and event.data.get("how") == "verify":
            # A verify trusted the project: its request comes next (the warm-up waits too).
            self._last_request = time.monotonic()
        elif event.kind == "verify.epoch.finished" and event.task:
            self._busy.discard(event.task.split(".", 1)[0])
            self._wake.set()

    def _pause(self, group: int) -> None:
        if self._stopped.is_set():
            return
        try:
            os.killpg(group, signal.SIGSTOP)
        except ProcessLookupError:
            return  # it has just ended
        self._stopped.set()
        self.pauses += 1
        self.state = "paused"

    def _resume(self, group: int) -> None:
        if self._stopped.is_set():  # only what this stopped: the group id may be reused
            self._stopped = anyio.Event()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGCONT)

    async def _resumer(self, group: int) -> None:
        """Resumes the paused group once verify is quiet; resumes it when cancelled too (a
        stopped process would not act on the SIGTERM that ends it until then)."""
        try:
            while True:
                await self._stopped.wait()
                await self.quiet()
                self._resume(group)
                self.state = "recording"
        finally:
            self._resume(group)

    async def quiet(self) -> None:
        """Until no verify is queued or running, and none was asked for in QUIET_S (heard
        while `listening`: the warm-up's steps wait for it too)."""
        while True:
            if self._busy:
                self.state = "waiting"
                self._wake = anyio.Event()
                await self._wake.wait()
                continue
            left = self._last_request + QUIET_S - time.monotonic()
            if self._last_request and left > 0:
                await anyio.sleep(left)
                continue
            return

    @contextlib.contextmanager
    def listening(self) -> Iterator[None]:
        """Hear verify requests (and their ends) for as long as the block runs: the slot
        listens from before the warm-up, so a request it missed cannot leave it thinking
        verify is quiet while one runs."""
        unsubscribe = self.bus.subscribe(self._on_event)
        self._listening += 1
        try:
            yield
        finally:
            self._listening -= 1
            unsubscribe()

    async def run(self, ctx: RungContext) -> None:
        with contextlib.ExitStack() as stack:
            if not self._listening:
                stack.enter_context(self.listening())
            await self._run(ctx)

    async def _run(self, ctx: RungContext) -> None:
        last: Selection | None = None
        while True:
            await self.quiet()
            self.state = "planning"
            selection = await anyio.to_thread.run_sync(self._plan, ctx)
            if self._busy:
                continue  # a request came while it planned
            if selection is None or selection == last:
                # Fresh, or what it just recorded is still not on record (a run that
                # cannot record): until a verify finishes, whose tree may differ.
                self.state = "done"
                last = None
                self._wake = anyio.Event()
                await self._wake.wait()
                continue
            last = selection if await self._record(ctx, selection) else None

    def _plan(self, ctx: RungContext) -> Selection | None:
        # The recording's modules load when it first plans (after a warm-up that went through
        # every step), not when a host opens the project.
        from ..deps_store import is_clean_at
        from ..select.selection import unrecorded
        from ..select.testdeps import deps_store_dir, load_testdeps

        snapshot = snapshot_of(ctx.root)
        if snapshot.hashes and snapshot.head and snapshot.head != self._head_skipped:
            store = deps_store_dir(ctx.workspace.state_dir)
            deps = self.memo.deps(store, load_testdeps)
            if deps is None or not any(is_clean_at(r, snapshot.head) for r in deps.runs.values()):
                return Selection(full=True, reasons=[_AT_HEAD])
        return unrecorded(
            ctx.layout,
            ctx.config,
            ctx.workspace.state_dir / "grimp",
            self.memo,
            head=snapshot.head,
            hashes=snapshot.hashes,
        )

    async def _record(self, base: RungContext, selection: Selection) -> bool:
        """Record `selection`; True when it ran to its end (False: a request cancelled it)."""
        from ...proc.priority import make_idle
        from ..rungs.suite import no_measuring, pytest_args
        from ..select.testdeps import Recording, RunScope

        assert base.env is not None
        snapshot = await anyio.to_thread.run_sync(snapshot_of, base.root)
        root, layout, extra = base.root, base.layout, dict[str, str]()
        if selection.reasons == [_AT_HEAD]:
            assert snapshot.head is not None
            at_head = await self._head_export(base, snapshot.head)
            if isinstance(at_head, str):
                self._head_skipped = snapshot.head
                self.bus.publish("verify.recording.finished", data={"note": at_head})
                return True
            layout, extra = at_head
            root = layout.root
            snapshot = dataclasses.replace(snapshot, hashes={})
        ladder_id = f"record-{time.strftime('%H%M%S')}"

        exported = root != base.root

        def started(task: str, record: ProcessRecord) -> None:
            self.applied = make_idle(record.pid)
            if exported:
                self._group = record.pid  # a session (and group) leader: the rung's spawn
                tg.start_soon(self._resumer, record.pid)

        ctx = dataclasses.replace(
            base,
            ladder_id=ladder_id,
            snapshot=snapshot,
            hooks=LadderHooks(
                ladder_id=ladder_id, process_started=started, substrate=self.substrates.lease
            ),
        )
        tests = [] if selection.full else selection.tests
        scope = (
            RunScope()
            if selection.full
            else RunScope(whole_suite=False, paths=[t for t in tests if "::" not in t])
        )
        rec = Recording(
            root, layout, ctx.workspace.state_dir, snapshot, scope, passed_only=root != base.root
        )
        # Its report goes to the spool, not where the project's addopts may put one.
        junit = ctx.spool("test.full", ".xml")
        argv = [str(base.env.python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        argv += [f"--junitxml={junit}", *no_measuring(base), *rec.args, *pytest_args(tests)]
        what = "the whole suite" if selection.full else f"{len(tests)} test(s)"
        self.state = "recording"
        self.bus.publish(
            "verify.recording.started",
            data={"tests": what, "reasons": selection.reasons[:5], "task": ctx.task("test.full")},
        )
        started_at, pauses_before = time.monotonic(), self.pauses
        with anyio.CancelScope() as scope_:
            self._scope = scope_
            try:
                env = rec.env()
                if extra:
                    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], extra["PYTHONPATH"]])
                async with anyio.create_task_group() as tg:
                    outcome = await ctx.run("test.full", argv, extra_env=env, cwd=root)
                    tg.cancel_scope.cancel()
            finally:
                self._scope = self._group = None
                junit.unlink(missing_ok=True)
        if scope_.cancelled_caught:
            rec.discard()
            self.cancels += 1
            self.bus.publish("verify.recording.cancelled", data={"reason": "a verify request"})
            return False
        done = outcome.signal is None and not outcome.timed_out
        paused_out = outcome.timed_out and self.pauses > pauses_before
        if exported and not (done and outcome.exit_code in _RECORDED) and not paused_out:
            self._head_skipped = snapshot.head  # HEAD's export does not run: not again
        note = await anyio.to_thread.run_sync(
            partial(rec.finish, done and outcome.exit_code in _RECORDED)
        )
        self.runs += 1
        self.bus.publish(
            "verify.recording.finished",
            data={
                "tests": what,
                "note": note,
                "exit_code": outcome.exit_code,
                "duration_s": round(time.monotonic() - started_at, 3),
                "pauses": self.pauses - pauses_before,
                "priority": self.applied,
            },
        )
        return True

    async def _head_export(
        self, ctx: RungContext, head: str
    ) -> tuple[Layout, dict[str, str]] | str:
        """The export of HEAD, its layout and the PYTHONPATH that imports its packages from
        it; a string: why HEAD's content cannot be recorded there."""
        from ..head import HeadTree
        from ..layout import discover_layout
        from ..rungs.pytest_head import imported_elsewhere

        assert ctx.env is not None
        tree = HeadTree(ctx.root, head, ctx.workspace.state_dir / "recording")
        try:
            export = await anyio.to_thread.run_sync(tree.export)
        except OSError as exc:
            return f"HEAD's content not recorded: its export failed ({exc})"
        layout = await anyio.to_thread.run_sync(discover_layout, export, ctx.config)
        if sorted(layout.packages) != sorted(ctx.layout.packages):
            return "HEAD's content not recorded: its packages differ from the working tree's"
        path = os.pathsep.join(str(p) for p in layout.source_roots)
        why = await imported_elsewhere(ctx, layout, ctx.process_env({"PYTHONPATH": path}))
        if why is not None:
            return f"HEAD's content not recorded: {why}"
        return layout, {"PYTHONPATH": path}
