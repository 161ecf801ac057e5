"""How runs end: adoption after a restart, watching, killing, and recording the end once.

`Shell` holds one `RunSupervisor`. Every end is a conditional update, so when several
habitat processes watch one run, exactly one records it and publishes its event; each of
them still wakes its own waiters (`until_ended`).
"""

from __future__ import annotations

import signal as signal_module
from collections.abc import Callable

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from ..clock import Clock
from ..events import EventBus
from ..proc import KillReport, ProcessRecord, marked_leader
from ..proc.keepers import drained
from ..proc.spawner import ProcessHandle, Spawner
from ..proc.spool import Spool
from . import leftovers
from .end_record import Ending, EndRecorder, carried
from .leftovers import Leftover
from .long_runs import LongRuns
from .lull import Lull
from .models import RunState
from .orphans import Orphans
from .run_store import RunRow, RunStore

__all__ = ["RunSupervisor"]

# A foreground run still going after this long gets its identity recorded for adoption.
# Real time, not the injected clock: it waits for the real process's exec to complete.
_IDENTIFY_AFTER_SECONDS = 0.05
# A `running` row without a pid this young belongs to a habitat between insert and spawn.
_SPAWN_GRACE_SECONDS = 5.0
# How often `until_ended` looks for the pid of such a row (it appears within milliseconds).
_PID_LOOK_SECONDS = 0.02
# Empty cgroups of ended runs are removed this many at a time, in one worker thread (a
# removal waits while any process on the machine moves between cgroups), and at close.
_GROUPS_PER_RELEASE = 16


class _End:
    """The waiters on one run's end, and its row as the end was recorded."""

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.row: RunRow | None = None


class RunSupervisor:
    """The runs this habitat process knows to be alive, and how each of them ended."""

    def __init__(
        self,
        store: RunStore,
        bus: EventBus,
        spawner: Spawner,
        clock: Clock,
        task_group: TaskGroup,
        kill_grace_seconds: float,
        long_run_nice: int = 0,
        lull: Lull | None = None,
    ) -> None:
        self.store = store
        self.bus = bus
        self.spawner = spawner
        self.clock = clock
        self._tg = task_group
        self._grace = kill_grace_seconds
        self._long_runs = LongRuns(spawner, task_group, long_run_nice)
        self._lull = lull or Lull(task_group)
        """What a run's end leaves to do that nothing reads before its answer (its empty
        cgroup's removal, its environment dump's rewrite) waits for it."""
        self._live: dict[int, ProcessHandle] = {}
        # Runs whose row exists and whose process this habitat is starting (between the two
        # a keeper may start first): `input` waits for them instead of calling them gone.
        self._starting: dict[int, anyio.Event] = {}
        self._killing: dict[int, tuple[RunState, int]] = {}
        """Runs being killed here: the state to record and the signal sent."""
        self._signalled: dict[int, int] = {}
        """Runs sent a signal other than TERM/KILL here, while the signal's delivery is awaited."""
        self.pumped: set[int] = set()
        """Runs whose keeper pumps their output (a short disk): their end waits for it."""
        self._orphaned: dict[int, int | None] = {}
        """Runs whose wrapper shell died while processes of theirs went on: its signal."""
        self._extra_env: dict[int, dict[str, str] | None] = {}
        self._ended: dict[int, _End] = {}
        self._emptied: list[ProcessRecord] = []
        """Runs that ended alone whose empty cgroups are still to remove."""
        self._unannounced: dict[int, Callable[[], None]] = {}
        self._record = EndRecorder(store, bus, spawner, clock, self.announce, self._recorded)

    def live(self, run_id: int) -> ProcessHandle | None:
        """The handle of a run this process started or adopted, while it runs."""
        return self._live.get(run_id)

    async def live_once_started(self, run_id: int, bound: float) -> ProcessHandle | None:
        """`live`, after waiting (at most `bound` seconds) for a run still being started."""
        starting = self._starting.get(run_id)
        if starting is not None:
            with anyio.move_on_after(bound):
                await starting.wait()
        return self._live.get(run_id)

    def starting(self, run_id: int) -> None:
        """Its row exists; its process is being started here (`started` or `not_started`)."""
        self._starting[run_id] = anyio.Event()

    def not_started(self, run_id: int) -> None:
        if (starting := self._starting.pop(run_id, None)) is not None:
            starting.set()

    # starting
    def hold(self, run_id: int, process: ProcessHandle) -> None:
        """A run this process started before its shell opened (`shell.quiet_run`): live
        here, so `adopt_all` leaves it be; `started` takes charge of it."""
        self._live[run_id] = process

    def started(
        self,
        run: RunRow,
        process: ProcessHandle,
        extra_env: dict[str, str] | None,
        announce: Callable[[], None],
        *,
        now: bool = True,
    ) -> None:
        """Take charge of a run just spawned (`extra_env` is not carried to the next run).
        Its lowering, if it runs long, is asked for apart (`lower_later`). `announce`
        publishes its start: `now`, else at `announce(run.id)` or in its end's commit."""
        self._live[run.id] = process
        self._extra_env[run.id] = extra_env
        self._unannounced[run.id] = announce
        if now:
            self.announce(run.id)
        self.not_started(run.id)  # started: whoever waited for it finds it now

    def announce(self, run_id: int) -> None:
        """Publish the run's start if it is not yet (see `started`)."""
        if (announce := self._unannounced.pop(run_id, None)) is not None:
            announce()

    def lower_later(self, run: RunRow, process: ProcessHandle, after: float) -> None:
        """Lower the run to the long-run nice if it still runs here `after` seconds from now."""
        self._long_runs.started(
            process.record, lambda: self._live.get(run.id) is process, after, run.files.output
        )

    def watch(self, run: RunRow, process: ProcessHandle) -> None:
        """Record the run's end when it comes, with nobody waiting for it."""
        self._tg.start_soon(self._watch, run, process)

    async def _watch(self, run: RunRow, process: ProcessHandle) -> None:
        returncode = await process.wait()
        await self.ended(run, returncode)

    async def ended(self, run: RunRow, returncode: int | None) -> RunRow:
        """`finish` for a run whose process exited: first looks (off the event loop) for the
        processes it leaves running, and lets a pumping keeper copy what is left in its
        pipe (bounded: a daemon the run left may hold the pipe)."""
        return (await self._end_of(run, returncode, answer_first=False))[0]

    async def ended_quick(self, run: RunRow, returncode: int | None) -> tuple[RunRow, bool]:
        """`ended` for a quick foreground run, and whether it ended alone (nothing of it
        lives); if so its end is written after its answer (`EndRecorder.later`)."""
        return await self._end_of(run, returncode, answer_first=True)

    async def _end_of(
        self, run: RunRow, returncode: int | None, *, answer_first: bool
    ) -> tuple[RunRow, bool]:
        if run.id in self.pumped:
            self.pumped.discard(run.id)
            if run.id not in self._killing:
                await drained(run.files.output)
        if run.id in self._killing or run.id in self._signalled:
            # Ended by a signal sent here: the kill looks at the whole tree itself, and its
            # caller waits a bounded grace for this end, which a scan must not delay.
            return self.finish(run, returncode), False
        if run.record is not None and self.spawner.ended_alone(run.record):
            # Its cgroup is empty: no scan.
            ended = self.finish(run, returncode, left=[], later=answer_first)
            self._emptied.append(run.record)
            if len(self._emptied) >= _GROUPS_PER_RELEASE:
                emptied, self._emptied = self._emptied, []
                self._lull.apart(lambda: self._release_groups(emptied))
            return ended, True
        left = await anyio.to_thread.run_sync(self._left_behind, run)
        return self.finish(run, returncode, left=left), False

    def _left_behind(self, run: RunRow) -> list[Leftover]:
        if run.record is None or run.files.read_state() is None:
            return []  # no recorded end: its wrapper died, and `_orphans_live` watches the rest
        return [
            Leftover(run.idx, member)
            for member in self.spawner.members(run.record)
            if member.pid != run.pid
        ]

    def leftovers(
        self, tab: str, newest: RunRow | None = None
    ) -> tuple[RunRow, list[Leftover]] | None:
        """The tab's newest ended run and the processes its runs left that still live.
        `newest`: the tab's newest run, when the caller has read it already."""
        last = newest if newest is not None else self.store.by_index(tab, None)
        if last is None or last.state == "running":
            last = self._record.previous(last) if last is not None else None
        if last is None:
            return None
        return last, leftovers.alive(self.spawner, leftovers.read(last.run_dir))

    async def kill_leftovers(self, tab: str, sig: int) -> tuple[int | None, KillReport]:
        """Kill what the tab's ended runs left running: the run index and the report."""
        found = self.leftovers(tab)
        if found is None or not found[1]:
            return None, KillReport()
        last, left = found
        report = KillReport()
        for item in left:
            part = await self.spawner.kill_tree(item.record, sig, self._grace)
            report.pids.extend(p for p in part.pids if p not in report.pids)
            report.remaining.extend(p for p in part.remaining if p not in report.remaining)
            report.tracking, report.untracked = part.tracking, part.untracked
        leftovers.write(last.run_dir, leftovers.alive(self.spawner, left))
        return left[-1].index, report

    async def identify(self, run: RunRow, process: ProcessHandle) -> None:
        """Persist the create time, so a later habitat can tell this process from a reused pid."""
        if process.record.create_time:
            return
        record = await anyio.to_thread.run_sync(process.identify)
        if record.create_time and process.alive():
            self.store.set_create_time(run.id, record.create_time)

    async def identify_later(self, run: RunRow, process: ProcessHandle) -> None:
        await anyio.sleep(_IDENTIFY_AFTER_SECONDS)
        if process.alive():
            await self.identify(run, process)

    # adoption
    def adopt_all(self) -> None:
        """Watch every run an earlier habitat left running; record the end of the others; and
        kill the verify rungs a dead habitat process left (where runs have cgroups)."""
        self.spawner.sweep()
        for run in self.store.running():
            self.reconcile(run, watch=True)

    def running(self, tab: str) -> RunRow | None:
        """The tab's running run, its row brought up to date first."""
        for run in self.store.running(tab):
            run = self.reconcile(run)
            if run.state == "running":
                return run
        return None

    def reconcile(self, run: RunRow, *, watch: bool = False) -> RunRow:
        """Bring a `running` row up to date with the process it names."""
        if run.id in self._live:
            return run
        if run.record is None and (found := marked_leader(run.marker)) is not None:
            # Spawned, but its habitat died before recording the pid: the process is the
            # truth, so record it and adopt it (else kill would find nothing while it runs).
            self.store.set_process(run.id, found)
            run = self.store.get(run.id) or run
        if run.record is not None:
            process = self.spawner.adopt(run.record)
            if process.alive():
                if watch:
                    self._live[run.id] = process
                    self.watch(run, process)
                    self._long_runs.started(
                        process.record, lambda: run.id in self._live, 0.0, run.files.output
                    )
                return run
        elif self.clock.time() - run.started_at < _SPAWN_GRACE_SECONDS:
            return run  # another habitat is between insert and spawn
        self.finish(run, None, lost=True, left=self._left_behind(run))
        return self.store.get(run.id) or run

    async def until_ended(self, run: RunRow) -> RunRow | None:
        """Return once the run's end is recorded (by this or another habitat process): its
        row as ended, or None when the row is gone (its tab was closed before the end was seen).

        The end arrives from the run's own watcher here: a run this process did not watch
        yet (another habitat process started it) is adopted and watched first, so its exit
        comes from the process itself (pidfd) rather than from looking again and again.
        The watcher wakes its waiters itself rather than through its `shell.run.*` event:
        the bus carries only the ends this process recorded, and when another habitat
        process records the end first, the bus here stays silent.
        """
        while True:
            row = self.store.get(run.id)
            if row is None or row.state != "running":
                return row
            if run.id not in self._live:
                row = self.reconcile(row, watch=True)
                if row.state != "running":
                    return row
            if run.id in self._live:
                # No await since the row was read: the end cannot slip in between.
                end = self._ended.setdefault(run.id, _End())
                await end.event.wait()
                return end.row
            # The row has no pid yet; its habitat records one right after the spawn.
            await anyio.sleep(_PID_LOOK_SECONDS)

    def _orphans_live(self, run: RunRow, returncode: int | None) -> bool:
        """Whether the run's wrapper died but processes carrying its marker still run; if
        so, they are watched instead (the run is still running as far as anyone can see)."""
        if run.record is None:
            return False
        row = self.store.get(run.id)
        if row is None or row.state != "running" or not self.spawner.members(run.record):
            return False
        if returncode is not None and returncode < 0:
            self._orphaned[run.id] = -returncode
        else:
            self._orphaned.setdefault(run.id, None)
        orphans = Orphans(run.record, self.spawner)
        self._live[run.id] = orphans
        self.watch(run, orphans)
        return True

    # ending
    def finish(
        self,
        run: RunRow,
        returncode: int | None,
        *,
        lost: bool = False,
        left: list[Leftover] | None = None,
        later: bool = False,
    ) -> RunRow:
        """Record how a run ended, carry its cwd/env to the tab, publish the event (once);
        `later`: after the caller's answer (`EndRecorder.later`).

        The state says what happened: a run ended by a signal this habitat sent is `killed`
        with that signal, whatever exit status its shell chose (a trap may `exit 0`); one
        ended by a signal from elsewhere reports that signal.
        """
        self._live.pop(run.id, None)
        files = run.files
        # The environment dump's rewrite as a delta waits until the answer has gone.
        recorded = files.read_state(rewrite=False)
        if recorded is not None and recorded.whole_dump:
            self._lull.later(lambda: self._forget_dump(run))
        if recorded is None and run.id not in self._killing and self._orphans_live(run, returncode):
            self.announce(run.id)
            return self.store.get(run.id) or run
        exit_code = recorded.exit_code if recorded else None
        sig = -returncode if returncode is not None and returncode < 0 else None
        forced = self._killing.pop(run.id, None)
        sent = self._signalled.pop(run.id, None)
        orphaned = run.id in self._orphaned
        wrapper_sig = self._orphaned.pop(run.id, None)
        state: RunState
        if forced is not None:
            state = forced[0]
            sig = sig or forced[1]
        elif sent is not None:
            state, sig = "killed", sent
        elif sig is not None:
            state = "killed"  # by someone outside the habitat: OOM killer, a person's kill -9
        elif orphaned and wrapper_sig is not None:
            state, sig = "killed", wrapper_sig  # its wrapper was; the rest ended later
        elif exit_code is not None:
            state = "exited"
        elif returncode is not None and not lost:
            state, exit_code = "exited", returncode
        else:
            state = "lost"
        if state != "exited":
            exit_code = (
                None  # a killed run's wrapper may still have written a code; it means nothing
            )
        extra = self._extra_env.pop(run.id, None)
        tab_cwd, tab_env = (
            carried(state, recorded.cwd, recorded.env, extra) if recorded else (None, None)
        )
        end = Ending(
            run,
            state,
            exit_code,
            sig,
            output_bytes=Spool(files.output).size(),
            ended_at=self._ended_at(run, returncode),
            tab_cwd=tab_cwd,
            tab_env=tab_env,
            left=left or [],
        )
        if not later:
            return self._record.now(end)
        self._lull.later(self._settle)  # at the latest
        return self._record.later(end)

    def after_end(self, job: Callable[[], object]) -> None:
        """Do `job` once the ends decided so far are recorded (`finish`'s `later`)."""
        self.store.db.defer(job)
        self._lull.later(self._settle)

    def _recorded(self, run_id: int, row: RunRow) -> None:
        end = self._ended.pop(run_id, None)
        if end is not None:
            end.row = row
            end.event.set()

    async def _settle(self) -> None:
        self.store.db.settle()

    async def _forget_dump(self, run: RunRow) -> None:
        row = self.store.get(run.id)
        if row is None or row.state != "running":
            run.files.drop_state()  # its end is recorded: one unlink, on the loop
        else:  # its record failed (a full disk): the next habitat reads it again
            run.files.forget_dump()  # a file made, renamed and one removed

    async def _release_groups(self, records: list[ProcessRecord]) -> None:
        await anyio.to_thread.run_sync(_release, self.spawner, records)

    def release_groups(self) -> None:
        """Remove the empty cgroups of the runs that ended alone (the shell is closing)."""
        _release(self.spawner, self._emptied)
        self._emptied = []

    def _ended_at(self, run: RunRow, returncode: int | None) -> float | None:
        """When a run nobody here saw end (adopted, or found ended) ended: when its wrapper
        wrote its state, not when someone looked. None: now."""
        if returncode is not None:
            return None
        written = run.files.state_written_at()
        if written is None:
            return None
        return max(run.started_at, min(written, self.clock.time()))

    async def kill(
        self, run: RunRow, state: RunState, sig: int = signal_module.SIGTERM
    ) -> KillReport:
        """Kill the run's tree and record it ended as `state` (killed, timed_out, cancelled)."""
        process = self._live.get(run.id)
        record = process.record if process else run.record
        if record is None:
            return KillReport()
        self._killing[run.id] = (state, sig)
        report = await self.spawner.kill_tree(record, sig, self._grace)
        # Its return code tells the signal; a leader that survived the kill is not waited for.
        returncode = None
        if process is not None and process.pid not in report.remaining:
            returncode = await process.wait()
        if self.store.get(run.id) is not None:
            self.finish(run, returncode)
        return report

    async def signal(self, run: RunRow, sig: int) -> KillReport:
        """Deliver `sig` to the run's tree (INT, HUP, USR1, …) and wait the grace for it to
        end; a run that ends is recorded `killed` by `sig`. One that goes on (it handled the
        signal) is left running, and its later end is its own."""
        process = self._live.get(run.id)
        record = process.record if process else run.record
        if record is None:
            return KillReport()
        self._signalled[run.id] = sig
        try:
            report = await self.spawner.kill_tree(record, sig, self._grace)
            handle = process or self.spawner.adopt(record)
            if not report.remaining and not handle.alive():
                if run.id in self._live:
                    # Its watcher here records the end (with the return code): wait for it.
                    with anyio.move_on_after(self._grace):
                        await self.until_ended(run)
                elif self.store.get(run.id) is not None:
                    self.finish(run, await handle.wait())
        finally:
            self._signalled.pop(run.id, None)
        return report


def _release(spawner: Spawner, records: list[ProcessRecord]) -> None:
    for record in records:
        spawner.release_group(record)
