"""Recording a run's end: its row, what its tab carries on, what it left running and its
event, in one commit; for a quick foreground run, once its answer has gone.

A run that ended alone (its cgroup empty, nothing left running) is answered from what its
wrapper recorded, and its end is written after the answer (`later`): the database defers
the write to before its next query or transaction (`Database.defer`), so nothing of this
habitat process reads the state from before it, and the shell's lull writes it at the
latest. A habitat process that dies in between leaves the row running with its `state`
file, from which the next one records the end, as after any crash.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from ..clock import Clock
from ..events import EventBus
from ..events.kinds import RunEnd
from ..proc.spawner import Spawner
from . import leftovers
from .environment import carried_env
from .leftovers import Leftover
from .models import RunState
from .run_store import RunRow, RunStore

__all__ = ["EndRecorder", "Ending", "carried"]

logger = logging.getLogger(__name__)

# How many running runs' predecessors `previous` keeps (it forgets them all past this).
_BEFORE_KEPT = 256
# The event a run's end publishes, by its state (any other: killed).
_RUN_END: dict[str, RunEnd] = {"exited": "shell.run.exited", "lost": "shell.run.lost"}


@dataclass(frozen=True)
class Ending:
    """How one run ended, as it is to be recorded."""

    run: RunRow
    state: RunState
    exit_code: int | None
    signal: int | None
    output_bytes: int
    ended_at: float | None
    """None: now (when it is recorded)."""
    tab_cwd: str | None
    tab_env: dict[str, str] | None
    left: list[Leftover]


class EndRecorder:
    """Writes runs' ends (`RunSupervisor.finish` decides them)."""

    def __init__(
        self,
        store: RunStore,
        bus: EventBus,
        spawner: Spawner,
        clock: Clock,
        announce: Callable[[int], None],
        recorded: Callable[[int, RunRow], None],
    ) -> None:
        """`announce(run_id)` publishes a run's start if it is not yet, in its end's
        commit; `recorded(run_id, row)` wakes who waits for the end."""
        self._store = store
        self._bus = bus
        self._spawner = spawner
        self._clock = clock
        self._announce = announce
        self._recorded = recorded
        self._before: dict[int, RunRow | None] = {}
        """Running run id → the run before it in its tab (`previous`)."""

    def now(self, end: Ending) -> RunRow:
        """Record the end at once: the row as ended (or as someone else recorded it)."""
        try:
            final = self._commit(end)
        except sqlite3.OperationalError as exc:
            self._store.full_disk(exc, "the end of the run")
        final = final or self._store.get(end.run.id) or end.run
        self._recorded(end.run.id, final)
        return final

    def _commit(self, end: Ending) -> RunRow | None:
        run = end.run
        # The run's end and its event: one commit (its locks and WAL frames) on the way out.
        with self._store.db.transaction():
            self._announce(run.id)  # a quick run's start, with its end
            if final := self._store.finish(
                run.id,
                end.state,
                exit_code=end.exit_code,
                signal=end.signal,
                timed_out=end.state == "timed_out",
                output_bytes=end.output_bytes,
                ended_at=end.ended_at,
                tab_cwd=end.tab_cwd,
                tab_env=end.tab_env,
            ):
                left = self._carry_leftovers(run, end.left)
                self._bus.publish(
                    _RUN_END.get(end.state, "shell.run.killed"),
                    tab=run.tab,
                    data={
                        "index": run.idx,
                        "command": run.command,
                        "state": end.state,
                        "exit_code": end.exit_code,
                        "signal": end.signal,
                        "duration_s": final.duration_s(self._clock.time()),
                        "left_running": [item.model().model_dump() for item in left],
                    },
                )
        return final

    def later(self, end: Ending) -> RunRow:
        """Record the end once this process next reads or writes its database (see the
        module's comment): the row as it will read. Its end time is now."""
        end = dataclasses.replace(
            end, ended_at=self._clock.time() if end.ended_at is None else end.ended_at
        )
        self._store.db.defer(functools.partial(self._now_or_log, end))
        return dataclasses.replace(
            end.run,
            state=end.state,
            exit_code=end.exit_code,
            signal=end.signal,
            timed_out=end.state == "timed_out",
            ended_at=end.ended_at,
            output_bytes=end.output_bytes,
        )

    def _now_or_log(self, end: Ending) -> None:
        try:
            self.now(end)
        except Exception:  # boundary: it runs inside another caller's query
            # The row stays running, its `state` kept (`_forget_dump` rewrites it): the
            # next look at the run (`reconcile`) records its end from there.
            logger.exception("could not record the end of run %s", end.run.id)

    def previous(self, run: RunRow) -> RunRow | None:
        """The run before the running `run` in its tab: asked by every scene while it runs,
        looked up once (its survivors file is still read each time)."""
        if run.id in self._before:
            return self._before[run.id]
        rows = self._store.history(run.tab, 2)
        previous = rows[0] if len(rows) == 2 and rows[0].id != run.id else None
        if len(self._before) >= _BEFORE_KEPT:
            self._before.clear()
        self._before[run.id] = previous
        return previous

    def _carry_leftovers(self, run: RunRow, left: list[Leftover]) -> list[Leftover]:
        """Record what the run left running, with what earlier runs of its tab left that still
        lives (so the newest ended run's file holds all of the tab's); the run's own part."""
        previous = self.previous(run)
        if previous is not None:
            earlier = leftovers.alive(self._spawner, leftovers.read(previous.run_dir))
            leftovers.write(run.run_dir, [*earlier, *left])
        else:
            leftovers.write(run.run_dir, left)
        return left


def carried(
    state: RunState, cwd: str | None, env: dict[str, str] | None, extra: dict[str, str] | None
) -> tuple[str | None, dict[str, str] | None]:
    """What an ended run's tab carries on (its cwd and environment): an exited run's, as its
    wrapper recorded them, less the variables given to that run alone (`extra`)."""
    if state != "exited":
        return None, None
    return cwd, carried_env(env, extra) if env is not None else None
