"""A foreground `habitat run` with no host, in this process with the standard library.

Without a host, `habitat run 'echo hi'` built the whole habitat (pydantic, anyio, every
service) for a command that is over in milliseconds: a quarter of a second of CPU before the
command started. When the workspace's state needs nothing done (`cli.quiet_state`: nothing
configured, no run marked running), this does what `Shell.run` does for a foreground run,
in the same order and with the same pieces: the sweeps of `Shell.open`, the run's row
(`RunStore.open_run`), its folder and wrapper (`wrapper_argv`, `ProcSpawner.spawn`), its
process on the row; then it waits the run's first moment (`follow.QUICK_SECONDS`). A run
over by then, with its wrapper's record and nothing of it left running, has its end
recorded here as `RunSupervisor.finish` and `EndRecorder` record it: the row, what its tab
carries on, the events `shell.tab.opened`, `shell.run.started` and `shell.run.exited` in
one commit; the answer is the `RunResult` as `views.run_result` builds it, as JSON data.

Anything else is handed over (`Handed`) to the full path, which picks the run up where this
left it (`Shell.follow_handed`): a run still going after its first moment (its keeper, its
identity, its lowering, its limit), one that left processes running, a wrapper that wrote
no record, one ended by a signal, and Ctrl-C in the first moment (the run is killed and
recorded cancelled there). Before anything is recorded, whatever the full path words
differently (a tab limit, a busy tab, a shell that cannot start, a disk short enough for a
pump) returns None: the full path answers the call from the start.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import HabitatError
from ..proc.keepers import KEEPER_AFTER_SECONDS, pump_needed, start_keeper
from ..proc.spawner import ProcSpawner
from ..proc.spool import Spool
from ..proc.spool_hole import prepare
from ..proc.spool_keeper import Budget
from ..proc.supervised import Supervised
from ..secrets import remember_typed, shown_command
from . import run_folders
from .environment import command_env
from .error_lines import left_out
from .journal_row import publish
from .output import read_capped
from .run_store import NewRun, RunRow, RunStore
from .shells import resolve_shell
from .tabs import resolve_cwd
from .wrapper import joins_group, wrapper_argv

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

    from ..store import Database

__all__ = ["Caps", "Handed", "left_file", "quiet_run"]

QUICK_SECONDS = KEEPER_AFTER_SECONDS
"""`follow.QUICK_SECONDS` (a test keeps them one): a run over before this is quick."""
_LEFT_FILE = "left_running.json"  # `leftovers._FILE`


@dataclass(frozen=True)
class Caps:
    """The shell's limits a run takes (`config.ShellConfig`'s, none configured)."""

    max_tabs: int
    history_rows: int
    output_cap_bytes: int
    spool_run_budget_bytes: int
    spool_workspace_budget_bytes: int

    @property
    def budget(self) -> Budget:
        return Budget(self.spool_run_budget_bytes, self.spool_workspace_budget_bytes)


@dataclass
class Handed:
    """A run started here that the full path follows from now on (`Shell.follow_handed`)."""

    run: RunRow
    """Its row, with its pid."""
    process: Supervised
    """Its wrapper, this process's child (its return code is known here)."""
    opened_tab: bool
    """The run opened its tab (`shell.tab.opened` is published with its start)."""
    shell_kind: str
    stale: list[Path]
    """Folders of runs trimmed from the tab's history, to remove."""
    quick_left: float
    """Seconds left of its first moment (`follow.QUICK_SECONDS`), by this process's clock."""
    cancelled: bool = False
    """Ctrl-C came in its first moment: the full path kills it and records it cancelled."""


def quiet_run(
    db_path: Path,
    *,
    label: str,
    spool_dir: Path,
    project_root: Path | None,
    command: str,
    tab: str,
    caps: Caps,
) -> dict[str, Any] | Handed | None:
    """Run `command` in `tab` in the foreground: its `RunResult` as JSON data once its end is
    recorded; a `Handed` run for the full path to follow; None when the full path must
    answer from the start (nothing was recorded). `db_path`: the workspace's `state.db`,
    at this schema; `project_root`: the open project, resolved (None: the cwd's); `label`:
    the workspace's (`Workspace.label`)."""
    from ..store.db import Database

    db = Database(db_path)
    try:
        return _run(db, label, spool_dir, project_root, command, tab, caps)
    finally:
        db.close()


def _run(
    db: Database,
    label: str,
    spool_dir: Path,
    project_root: Path | None,
    command: str,
    tab: str,
    caps: Caps,
) -> dict[str, Any] | Handed | None:
    spawner = ProcSpawner()
    # As `Shell.open` does before anything (no run is marked running: none to adopt).
    run_folders.sweep(spool_dir)
    spawner.sweep()
    remember_typed(command, None)
    store = RunStore(db)
    row = store.tab(tab)
    try:
        shell = resolve_shell(row.shell if row else None)
        cwd = resolve_cwd(row.cwd if row else None, None, project_root)
    except HabitatError:
        return None  # the full path says what is wrong
    env = command_env(row.env if row else None, None)
    if pump_needed(spool_dir / "run-0" / "output", caps.budget):
        return None  # a keeper starts before the command: the full path's `pipe`
    try:
        opened = store.open_run(
            NewRun(
                tab=tab,
                command=command,
                cwd=cwd,
                shell=shell.executable,
                background=False,
                interactive=False,
            ),
            spool_dir=spool_dir,
            max_tabs=caps.max_tabs,
            keep=caps.history_rows,
        )
    except HabitatError:
        return (
            None  # a tab limit, a busy tab, a full disk: nothing recorded, the full path words it
        )
    run = opened.run
    try:
        run_folders.new_folder(run.run_dir)
        prepare(run.files.output)  # what lets its keeper cut it on a full disk
        process = spawner.spawn(
            wrapper_argv(shell, run.run_dir, command),
            cwd=Path(cwd),
            env=env,
            output=run.files.output,
            stdin_pipe=False,
            marker=run.marker,
            identify=False,
            joins_group=joins_group(shell),
        )
    except OSError:
        # Nothing started: the row and folder go again (as `Shell._run` does), and the full
        # path starts it anew and says what is wrong.
        store.abandon_run(opened)
        shutil.rmtree(run.run_dir, ignore_errors=True)
        return None
    started = time.monotonic()
    run = dataclasses.replace(run, pid=process.pid)
    handed = Handed(run, process, opened.opened_tab, shell.kind, opened.stale, QUICK_SECONDS)
    try:
        store.set_process(run.id, process.record)
        returncode = process.wait_within(QUICK_SECONDS)
    except KeyboardInterrupt:  # the run started: the full path kills it, records it cancelled
        handed.cancelled = True
        return handed
    handed.quick_left = max(0.0, QUICK_SECONDS - (time.monotonic() - started))
    if returncode is None or returncode < 0:
        return handed  # still going, or ended by a signal: the full path follows it
    return _ended(db, store, spawner, handed, returncode, label=label, caps=caps) or handed


def _ended(
    db: Database,
    store: RunStore,
    spawner: ProcSpawner,
    handed: Handed,
    returncode: int,
    *,
    label: str,
    caps: Caps,
) -> dict[str, Any] | None:
    """Record the end of a run that exited within its first moment, as
    `RunSupervisor.ended_quick` and `finish` do for one that ended alone or left nothing
    running: its `RunResult` data. None (nothing recorded) for any other end."""
    run = handed.run
    record = run.record
    files = run.files
    assert record is not None
    alone = spawner.ended_alone(record)
    if not alone and files.read_state() is not None:  # `_left_behind`, its rewrite included
        if any(member.pid != run.pid for member in spawner.members(record)):
            return None  # it left processes running
    recorded = files.read_state(rewrite=False)
    if recorded is None:
        return None  # no record from its wrapper: the full path looks for its orphans
    previous = _previous(store, run)
    if previous is not None and left_file(previous.run_dir):
        return None  # what earlier runs left is carried on: the full path reads it
    ended_at = time.time()
    with db.transaction() as conn:
        if handed.opened_tab:
            opened = {"shell": handed.shell_kind, "cwd": run.cwd}
            publish(conn, label, "shell.tab.opened", run.tab, opened)
        publish(
            conn,
            label,
            "shell.run.started",
            run.tab,
            {
                "index": run.idx,
                "command": run.command,
                "pid": run.pid,
                "cwd": run.cwd,
                "background": False,
            },
        )
        final = store.finish(
            run.id,
            "exited",
            exit_code=recorded.exit_code,
            signal=None,
            output_bytes=Spool(files.output).size(),
            ended_at=ended_at,
            tab_cwd=recorded.cwd,
            tab_env=recorded.env,
        )
        if final is not None:  # else recorded by another habitat process (`EndRecorder`)
            with contextlib.suppress(OSError):
                os.unlink(run.run_dir / _LEFT_FILE)  # `leftovers.write(run_dir, [])`
            publish(
                conn,
                label,
                "shell.run.exited",
                run.tab,
                {
                    "index": run.idx,
                    "command": run.command,
                    "state": "exited",
                    "exit_code": recorded.exit_code,
                    "signal": None,
                    "duration_s": final.duration_s(time.time()),
                    "left_running": [],
                },
            )
    final = final or store.get(run.id) or run
    _after_answer(handed, final, alone, recorded.whole_dump, caps)
    return _result(final, alone, caps)


def _previous(store: RunStore, run: RunRow) -> RunRow | None:
    """`EndRecorder.previous`: the run before `run` in its tab."""
    rows = store.history(run.tab, 2)
    return rows[0] if len(rows) == 2 and rows[0].id != run.id else None


def left_file(run_dir: Path) -> bool:
    try:
        return os.path.getsize(run_dir / _LEFT_FILE) > 0
    except OSError:
        return False


def _after_answer(handed: Handed, run: RunRow, alone: bool, whole_dump: bool, caps: Caps) -> None:
    """What `Shell` leaves for after the answer, done once it is recorded: the environment
    dump goes (`_forget_dump`), a keeper starts for a spool over half its budget
    (`SpoolKeeping.settled`), the empty cgroup goes (`release_groups`), and so do the
    folders of runs trimmed from the history (`SpoolKeeping.close`)."""
    if whole_dump:
        run.files.drop_state()
    if Spool(run.files.output).size() > caps.spool_run_budget_bytes // 2:
        with contextlib.suppress(OSError):  # the run is over; its output stays as it is
            start_keeper(run.files.output, caps.budget)
    if alone and run.marker:
        from ..proc import cgroup

        cgroup.remove(run.marker)
    run_folders.remove(handed.stale)


def _result(run: RunRow, alone: bool, caps: Caps) -> dict[str, Any]:
    """`views.run_result(…).model_dump(mode="json")`: the same keys in the same order."""
    output = str(run.files.output)
    capped = read_capped(output, caps.output_cap_bytes)
    errors = left_out(output, capped, run.state, run.exit_code, run.signal, run.timed_out)
    return {
        "tab": run.tab,
        "index": run.idx,
        "command": shown_command(run.command),
        "pid": run.pid,
        "state": run.state,
        "exit_code": run.exit_code,
        "signal": run.signal,
        "timed_out": run.timed_out,
        "duration_s": run.duration_s(time.time()),
        "cwd": run.cwd,
        "output": capped.text,
        "omitted_bytes": capped.omitted_bytes,
        "output_bytes": capped.total_bytes,
        "spool": output,
        "cursor": capped.total_bytes,
        "left_running": [],
        "error_lines": errors.lines,
        "error_lines_more": errors.more,
    }
