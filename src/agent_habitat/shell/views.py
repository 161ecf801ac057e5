"""Read-only verbs of the shell: results, history, last, which, wait, each over `Tabs`
(the scene has its own module, `scene`)."""

from __future__ import annotations

import functools

import anyio.to_thread

from ..errors import NotFoundError
from . import error_lines, leftovers
from .error_lines import ErrorLines
from .models import (
    DEFAULT_TAB,
    HistoryArgs,
    HistoryResult,
    LastArgs,
    LastResult,
    RunResult,
    WaitArgs,
    WaitResult,
    WhichArgs,
    WhichResult,
)
from .output import Capped, ClientPattern, read_capped, read_lines_inline, read_lines_window
from .run_store import RunRow
from .shells import resolve_shell, shell_version
from .tabs import Tabs
from .waiting import Progress, WaitReason, wait_for_run

__all__ = ["history", "last", "run_result", "wait", "which"]


def _error_lines(run: RunRow, capped: Capped) -> ErrorLines:
    return error_lines.left_out(
        str(run.files.output), capped, run.state, run.exit_code, run.signal, run.timed_out
    )


def run_result(tabs: Tabs, run: RunRow, *, alone: bool = False) -> RunResult:
    """`run` as its caller reads it. `alone`: it ended alone (`RunSupervisor.ended_quick`),
    so it left nothing running, and its file of what runs left running is not read."""
    capped = read_capped(run.files.output, tabs.config.output_cap_bytes)
    errors = _error_lines(run, capped)
    left = [] if alone else leftovers.read(run.run_dir)
    return RunResult(
        tab=run.tab,
        index=run.idx,
        command=run.command,
        pid=run.pid,
        state=run.state,
        exit_code=run.exit_code,
        signal=run.signal,
        timed_out=run.timed_out,
        duration_s=run.duration_s(tabs.clock.time()),
        cwd=run.cwd,
        output=capped.text,
        omitted_bytes=capped.omitted_bytes,
        output_bytes=capped.total_bytes,
        spool=str(run.files.output),
        cursor=capped.total_bytes,
        left_running=[item.model() for item in left if item.index == run.idx],
        error_lines=errors.lines,
        error_lines_more=errors.more,
    )


def history(tabs: Tabs, args: HistoryArgs) -> HistoryResult:
    tabs.get(args.tab)
    tabs.runs.running(args.tab)  # brings a finished background run up to date
    rows = tabs.store.history(args.tab, args.limit)
    now = tabs.clock.time()
    return HistoryResult(tab=args.tab, rows=[r.history_row(now) for r in rows])


def _run_or_error(tabs: Tabs, tab: str, index: int | None) -> RunRow:
    tabs.get(tab)
    tabs.runs.running(tab)
    run = tabs.store.by_index(tab, index)
    if run is None:
        which = f"run #{index}" if index is not None else "runs yet"
        raise NotFoundError(f"tab {tab!r} has no {which}; see `history`")
    return run


async def last(tabs: Tabs, args: LastArgs, grep: ClientPattern | None) -> LastResult:
    run = _run_or_error(tabs, args.tab, args.index)
    cap = tabs.config.output_cap_bytes
    since = args.since or 0
    errors = ErrorLines()
    if args.head_lines is None and args.tail_lines is None and grep is None:
        capped = read_capped(run.files.output, cap, since=since)
        errors = _error_lines(run, capped)
    else:
        output, heads, tails = run.files.output, args.head_lines, args.tail_lines
        window = None
        if grep is None:
            window = read_lines_inline(output, cap, since=since, head_lines=heads, tail_lines=tails)
        if window is None:
            # A scan of a big spool, or with a pattern, takes seconds: off the event loop,
            # where it stops when cancelled.
            window = await anyio.to_thread.run_sync(
                functools.partial(
                    read_lines_window,
                    output,
                    cap,
                    since=since,
                    head_lines=heads,
                    tail_lines=tails,
                    grep=grep,
                )
            )
        capped = window
    return LastResult(
        tab=run.tab,
        index=run.idx,
        command=run.command,
        state=run.state,
        running=run.state == "running",
        exit_code=run.exit_code,
        signal=run.signal,
        output=capped.text,
        omitted_bytes=capped.omitted_bytes,
        output_bytes=capped.total_bytes,
        cursor=capped.total_bytes,
        spool=str(run.files.output),
        error_lines=errors.lines,
        error_lines_more=errors.more,
    )


async def which(tabs: Tabs, args: WhichArgs) -> WhichResult:
    tab = tabs.store.tab(args.tab)
    if tab is None and args.tab != DEFAULT_TAB:
        # The default tab may be asked before its first run: the shell a first command gets.
        tabs.get(args.tab)
    shell = resolve_shell(tab.shell if tab else None)
    running = tabs.runs.running(args.tab) if tab else None
    return WhichResult(
        tab=args.tab,
        shell=shell.kind,
        executable=shell.executable,
        version=await shell_version(shell.executable),
        cwd=tab.cwd if tab else tabs.default_cwd(),
        pid=running.pid if running else None,
        state="running" if running else "idle",
    )


async def wait(
    tabs: Tabs, args: WaitArgs, until: ClientPattern | None, progress: Progress | None
) -> WaitResult:
    """Until `until` matches the run's output, the run exits, or the timeout passes."""
    tabs.get(args.tab)
    run = tabs.runs.running(args.tab) or tabs.store.by_index(args.tab, None)
    if run is None:
        return WaitResult(
            tab=args.tab,
            index=None,
            reason="not_running",
            state=None,
            exit_code=None,
            output="",
            cursor=0,
        )
    waited = await wait_for_run(tabs.runs, run, until, args.timeout_seconds, progress, tabs.clock)
    # A row gone by now had its tab closed: the end the wait saw says how it ended.
    final = tabs.store.get(run.id) or waited.ended or run
    return _wait_result(tabs, final, waited.reason, waited.match)


def _wait_result(tabs: Tabs, run: RunRow, reason: WaitReason, match: str | None) -> WaitResult:
    capped = read_capped(run.files.output, tabs.config.output_cap_bytes)
    return WaitResult(
        tab=run.tab,
        index=run.idx,
        reason=reason,
        match=match,
        state=run.state,
        exit_code=run.exit_code,
        signal=run.signal,
        output=capped.text,
        cursor=capped.total_bytes,
    )
