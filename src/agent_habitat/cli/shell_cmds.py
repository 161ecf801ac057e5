"""`habitat run|rerun|scene|history|last|which|kill|close|wait|input` — the verb table as
subcommands (`cli.flags` builds each from its row), shown with rich, keyed by result type.

When a host runs for the workspace the call goes to it over its JSON API (`host.client`):
a person and the agent see the same tabs, and `input` reaches a run the agent started.
Otherwise the verb runs embedded, on the workspace state. Output and exit codes are the
same either way; a foreground run streams its spool file live on both paths.

`--json` prints the result model; the exit code is the command's for runs (124 on timeout),
1 when a wait did not see its match or the exit, or a kill left processes alive.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from ..host.launcher import find_host
from ..host.lock import HostRecord
from ..project_scene import ProjectSceneResult, render_project_scene
from ..shell import models as m
from ..verbs import VERBS, Verb
from .attach import Caller, Streamer, follow_run, terminal_env
from .common import emit_json, open_habitat, project_root, run_command
from .flags import add_verb_parser, request_from
from .scene_view import print_scene

__all__ = ["register"]

_err = Console(stderr=True, highlight=False)
_out = Console(highlight=False)


def register(subparsers: Any) -> None:
    for verb in VERBS:
        if verb.cli:
            add_verb_parser(subparsers, verb).set_defaults(handler=_handler(verb))


@dataclass(frozen=True)
class View:
    """How the CLI shows one result type: `show(result, streamed)` and the exit code."""

    show: Callable[[Any, bool], None]
    exit_code: Callable[[Any], int] = lambda result: 0
    streams: bool = False
    """Copy the run's output to the terminal while it goes on (foreground runs)."""


async def _embedded(
    args: argparse.Namespace, serve: Callable[[Caller], Awaitable[BaseModel]]
) -> BaseModel:
    """The verb in this process, on the workspace state (no host runs)."""
    async with open_habitat(args) as habitat:

        async def call(verb: Verb, request: BaseModel) -> BaseModel:
            return await verb.call(habitat, request, None)

        return await serve(call)


async def _via_host(
    record: HostRecord, serve: Callable[[Caller], Awaitable[BaseModel]]
) -> BaseModel:
    """The verb in the workspace host, over its JSON API: its tabs, its stdin pipes."""
    from ..host.client import HostClient

    async with HostClient(record) as host:
        return await serve(host.call)


async def _host_for_stdin(root: Path, record: HostRecord | None) -> HostRecord:
    """A background interactive run needs a process that outlives this one to hold its stdin
    open for `input`: the workspace host, started here when none runs."""
    if record is not None:
        return record
    from ..host.launcher import ensure_host

    handle = await anyio.to_thread.run_sync(ensure_host, root)
    if handle.started:
        _err.print(
            f"started the workspace host (pid {handle.record.pid}) to hold the run's stdin "
            "open for `habitat input`; `habitat host stop` ends it",
            style="dim",
        )
    return handle.record


def _handler(verb: Verb) -> Callable[[argparse.Namespace], int]:
    view = _VIEWS.get(verb.result, _FALLBACK)

    def handler(args: argparse.Namespace) -> int:
        async def body() -> int:
            request = request_from(verb, args)
            background = bool(getattr(request, "background", False))
            interactive = bool(getattr(request, "interactive", False))
            root = project_root(args)
            record = find_host(root)
            if interactive and background:
                record = await _host_for_stdin(root, record)
            elif interactive and isinstance(request, m.RunArgs):
                request = terminal_env(request)
            streamer = None
            if view.streams and not args.json and not background:
                streamer = Streamer(getattr(request, "tab", "main"))

            async def serve(call: Caller) -> BaseModel:
                if streamer is None and not (interactive and not background):
                    return await call(verb, request)
                return await follow_run(
                    call,
                    verb,
                    request,
                    tab=getattr(request, "tab", "main"),
                    streamer=streamer,
                    interactive=interactive,
                )

            if record is None:
                result = await _embedded(args, serve)
            else:
                result = await _via_host(record, serve)
            if args.json:
                emit_json(result)
            else:
                view.show(result, streamer is not None)
            return view.exit_code(result)

        return run_command(body)

    return handler


def _run_exit_code(result: m.RunResult | m.WaitResult) -> int:
    if result.state == "running":
        return 0
    if result.state == "timed_out":
        return 124
    if result.state == "cancelled":
        return 130
    if result.exit_code is not None:
        return result.exit_code
    return 128 + (result.signal or 9)


def _wait_exit_code(result: m.WaitResult) -> int:
    """A match: 0; the run's end: its exit code, as `habitat run` gives it; else 1."""
    if result.reason == "matched":
        return 0
    if result.reason == "exited":
        return _run_exit_code(result)
    return 1


def _end_words(state: str | None, exit_code: int | None, sig: int | None) -> str:
    """How a run ended, in words: `exit 4`, `killed by SIGINT`, `lost (no exit code)`."""
    if exit_code is not None:
        return f"exit {exit_code}"
    if sig:
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"{state or 'ended'} by {name}"
    return f"{state or 'no run'} (no exit code)"


def _show_run(r: m.RunResult, streamed: bool) -> None:
    if not streamed and r.state != "running":
        sys.stdout.write(r.output)
    if r.state == "running":
        status = f"#{r.index} running in tab {r.tab} (pid {r.pid}); `habitat last --tab {r.tab}`"
    else:
        status = _end_words(r.state, r.exit_code, r.signal)
        status += f" · {r.duration_s:.2f}s · tab {r.tab} #{r.index}"
    _err.print(status, style="dim")
    if r.omitted_bytes and not streamed:
        _err.print(f"[{r.omitted_bytes} bytes omitted; full output: {r.spool}]")


def _show_scene(scene: m.SceneResult, streamed: bool) -> None:
    print_scene(scene, _out)


def _show_history(result: m.HistoryResult, streamed: bool) -> None:
    table = Table("#", "command", "state", "exit", "duration", "bytes", "cwd")
    for row in result.rows:
        table.add_row(
            str(row.index),
            row.command,
            row.state,
            row.state if row.exit_code is None else str(row.exit_code),
            f"{row.duration_s:.2f}s",
            str(row.output_bytes),
            row.cwd,
        )
    _out.print(table)


def _show_last(result: m.LastResult, streamed: bool) -> None:
    sys.stdout.write(result.output)
    state = (
        "running"
        if result.running
        else _end_words(result.state, result.exit_code, result.signal)
        + ("" if result.exit_code is None else f" ({result.state})")
    )
    _err.print(
        f"#{result.index} `{result.command}` · {state} · {result.output_bytes} B · "
        f"cursor {result.cursor}",
        style="dim",
    )


def _show_which(result: m.WhichResult, streamed: bool) -> None:
    _out.print(
        f"{result.tab}: {result.shell} ({result.executable}, {result.version})\n"
        f"cwd {result.cwd} · {result.state}" + (f" · pid {result.pid}" if result.pid else "")
    )


def _show_kill(result: m.KillResult, streamed: bool) -> None:
    if not result.killed:
        _out.print(f"tab {result.tab}: nothing running")
        return
    _out.print(
        f"tab {result.tab} #{result.index}: SIG{result.signal.removeprefix('SIG')}"
        f" to {len(result.pids)} process(es); {len(result.remaining)} left"
    )


def _show_close(result: m.CloseResult, streamed: bool) -> None:
    _out.print(f"closed {result.tab}" + (" (killed its command)" if result.killed else ""))


def _show_wait(result: m.WaitResult, streamed: bool) -> None:
    if result.index is None:
        _out.print(f"{result.reason} · tab {result.tab} has no runs yet")
        return
    detail = f" {result.match!r}" if result.match else ""
    end = (
        "still running"
        if result.state == "running"
        else _end_words(result.state, result.exit_code, result.signal)
    )
    _out.print(f"{result.reason}{detail} · tab {result.tab} #{result.index} · {end}")


def _show_input(result: m.InputResult, streamed: bool) -> None:
    _out.print(f"wrote {result.bytes_written} B to #{result.index}")


def _show_project(result: ProjectSceneResult, streamed: bool) -> None:
    sys.stdout.write(render_project_scene(result))


def _show_json(result: BaseModel, streamed: bool) -> None:
    emit_json(result)


_FALLBACK = View(_show_json)
"""A result type without a view of its own is printed as its JSON."""

_VIEWS: dict[type[BaseModel], View] = {
    m.RunResult: View(_show_run, _run_exit_code, streams=True),
    m.SceneResult: View(_show_scene),
    m.HistoryResult: View(_show_history),
    m.LastResult: View(_show_last),
    m.WhichResult: View(_show_which),
    # Nothing to kill is a refusal: non-zero, as every refusal is.
    m.KillResult: View(_show_kill, lambda r: 0 if r.killed and not r.remaining else 1),
    m.CloseResult: View(_show_close),
    m.WaitResult: View(_show_wait, _wait_exit_code),
    m.InputResult: View(_show_input),
    ProjectSceneResult: View(_show_project),
}
