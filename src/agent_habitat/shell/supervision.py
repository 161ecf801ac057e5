"""How a run ends: adoption after a restart, watching, killing, and recording the end.

Mixed into `ShellHabitat`; kept apart so the verbs read on their own. Every end is a
conditional update, so when several habitat processes watch one run, exactly one records
it and publishes its event.
"""

from __future__ import annotations

import signal as signal_module
import time

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from ..config import ShellConfig
from ..events import EventBus
from ..proc import KillReport, Supervised, is_alive, kill_tree
from .environment import carried_env
from .models import RunState
from .output import spool_size
from .records import RunRow, RunStore

__all__ = ["RunSupervision"]

# A foreground run still going after this long gets its identity recorded for adoption.
_IDENTIFY_AFTER_SECONDS = 0.05


class RunSupervision:
    config: ShellConfig
    bus: EventBus
    store: RunStore
    _tg: TaskGroup
    _live: dict[int, Supervised]
    _killing: dict[int, RunState]
    _extra_env: dict[int, dict[str, str] | None]

    # adoption and the end of runs
    def _adopt_all(self) -> None:
        for run in self.store.running():
            self._reconcile(run, watch=True)

    def _reconcile(self, run: RunRow, *, watch: bool = False) -> RunRow:
        """Bring a `running` row up to date with the process it names."""
        if run.id in self._live:
            return run
        if run.record is not None and is_alive(run.record):
            if watch:
                sup = Supervised.adopt(run.record)
                self._live[run.id] = sup
                self._tg.start_soon(self._watch, run, sup)
            return run
        elif run.record is None and time.time() - run.started_at < 5:
            return run  # another habitat is between insert and spawn
        else:
            self._finish(run, None, lost=True)
        return self.store.get(run.id) or run

    async def _watch(self, run: RunRow, sup: Supervised) -> None:
        returncode = await sup.wait()
        self._finish(run, returncode)

    def _finish(self, run: RunRow, returncode: int | None, *, lost: bool = False) -> RunRow:
        """Record how a run ended, carry its cwd/env to the tab, publish the event (once)."""
        self._live.pop(run.id, None)
        files = run.files
        recorded = files.read_state()
        exit_code = recorded.exit_code if recorded else None
        sig = -returncode if returncode is not None and returncode < 0 else None
        forced = self._killing.pop(run.id, None)
        state: RunState
        if forced is not None:
            state = forced
        elif exit_code is not None:
            state = "exited"
        elif sig is not None:
            state = "killed"  # by someone outside the habitat: OOM killer, a person's kill -9
        elif returncode is not None and not lost:
            state, exit_code = "exited", returncode
        else:
            state = "lost"
        if state != "exited":
            exit_code = (
                None  # a killed run's wrapper may still have written a code; it means nothing
            )
        carried = state == "exited"
        if self.store.finish(
            run.id,
            state,
            exit_code=exit_code,
            signal=sig,
            timed_out=state == "timed_out",
            output_bytes=spool_size(files.output),
            tab_cwd=recorded.cwd if carried and recorded else None,
            tab_env=self._carry(run, recorded.env) if carried and recorded else None,
        ):
            kind = {"exited": "exited", "lost": "lost"}.get(state, "killed")
            self.bus.publish(
                f"shell.run.{kind}",
                tab=run.tab,
                data={
                    "index": run.idx,
                    "command": run.command,
                    "state": state,
                    "exit_code": exit_code,
                    "signal": sig,
                    "duration_s": run.duration_s,
                },
            )
        self._extra_env.pop(run.id, None)
        return self.store.get(run.id) or run

    def _carry(self, run: RunRow, final: dict[str, str] | None) -> dict[str, str] | None:
        return None if final is None else carried_env(final, self._extra_env.get(run.id))

    async def _identify(self, run: RunRow, sup: Supervised) -> None:
        """Persist the create time, so a later habitat can tell this process from a reused pid."""
        if sup.record.create_time:
            return
        record = await anyio.to_thread.run_sync(sup.identify)
        if record.create_time and sup.alive():
            self.store.set_create_time(run.id, record.create_time)

    async def _identify_later(self, run: RunRow, sup: Supervised) -> None:
        await anyio.sleep(_IDENTIFY_AFTER_SECONDS)
        if sup.alive():
            await self._identify(run, sup)

    async def _kill_run(
        self, run: RunRow, sup: Supervised | None, state: RunState, sig: int = signal_module.SIGTERM
    ) -> KillReport:
        record = sup.record if sup else run.record
        if record is None:
            return KillReport()
        self._killing[run.id] = state
        report = await kill_tree(record, sig, self.config.kill_grace_seconds)
        returncode = await sup.wait() if sup and sup.popen is not None else None
        if self.store.get(run.id) is not None:
            self._finish(run, returncode)
        return report
