"""`habitat run|rerun|scene|history|last|which|kill|close|wait|input` — the shell verbs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from ..errors import UsageError
from ..shell import ShellHabitat
from ..shell.models import (
    CloseArgs,
    CloseResult,
    HistoryArgs,
    HistoryResult,
    InputArgs,
    InputResult,
    KillArgs,
    KillResult,
    LastArgs,
    LastResult,
    RerunArgs,
    RunArgs,
    RunResult,
    SceneResult,
    WaitArgs,
    WaitResult,
    WhichArgs,
    WhichResult,
)
from .common import add_common, build_args, emit_json, open_shell, run_command

__all__ = ["register"]

_err = Console(stderr=True, highlight=False)
_out = Console(highlight=False)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("run", help="run a command in a tab")
    p.add_argument("command", help="the shell command line, e.g. 'make -j2'")
    p.add_argument("--tab", default="main", help="tab name (created on first use)")
    p.add_argument("--cwd", help="start here instead of the tab's cwd")
    p.add_argument("--shell", help="bash, sh, zsh, fish or pwsh")
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra variable for this command only (repeatable)",
    )
    _add_timing(p)
    p.add_argument("--interactive", action="store_true", help="keep stdin open for `input`")
    add_common(p)
    p.set_defaults(handler=cmd_run)

    p = subparsers.add_parser("rerun", help="run a history entry again (default the last)")
    p.add_argument("--tab", default="main")
    p.add_argument("--index", type=int)
    _add_timing(p)
    add_common(p)
    p.set_defaults(handler=cmd_rerun)

    p = subparsers.add_parser("scene", help="every tab at once")
    add_common(p)
    p.set_defaults(handler=cmd_scene)

    p = subparsers.add_parser("history", help="a tab's runs (no output bodies)")
    p.add_argument("--tab", default="main")
    p.add_argument("--limit", type=int)
    add_common(p)
    p.set_defaults(handler=cmd_history)

    p = subparsers.add_parser("last", help="output of a run (live while it runs)")
    p.add_argument("--tab", default="main")
    p.add_argument("--index", type=int)
    p.add_argument("--head-lines", type=int)
    p.add_argument("--tail-lines", type=int)
    p.add_argument("--since", type=int, help="byte cursor from an earlier result")
    p.add_argument("--grep", help="regex: only matching lines")
    add_common(p)
    p.set_defaults(handler=cmd_last)

    p = subparsers.add_parser("which", help="a tab's shell, cwd and state")
    p.add_argument("--tab", default="main")
    add_common(p)
    p.set_defaults(handler=cmd_which)

    for name, text in (
        ("kill", "kill the tab's running process tree"),
        ("close", "kill if needed and close the tab"),
    ):
        p = subparsers.add_parser(name, help=text)
        p.add_argument("tab")
        if name == "kill":
            p.add_argument("--signal", default="TERM")
        add_common(p)
        p.set_defaults(handler=cmd_kill if name == "kill" else cmd_close)

    p = subparsers.add_parser("wait", help="wait for a regex in the output, the exit, or a timeout")
    p.add_argument("--tab", default="main")
    p.add_argument("--until", help="regex to wait for")
    p.add_argument("--timeout-seconds", type=float)
    add_common(p)
    p.set_defaults(handler=cmd_wait)

    p = subparsers.add_parser("input", help="write to the stdin of a tab's interactive command")
    p.add_argument("tab")
    p.add_argument("text")
    p.add_argument("--eof", action="store_true")
    add_common(p)
    p.set_defaults(handler=cmd_input)


def _add_timing(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--timeout-seconds", type=float, metavar="S", help="kill the whole tree after S seconds"
    )
    p.add_argument("--background", action="store_true", help="return at once with the pid")
    p.add_argument(
        "--yield-after-seconds",
        type=float,
        metavar="S",
        help="after S seconds, return while it goes on (no kill)",
    )


def _parse_env(pairs: list[str]) -> dict[str, str] | None:
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--env {pair!r}: expected KEY=VALUE")
        env[key] = value
    return env or None


class _Streamer:
    """Copies new spool bytes to the terminal as a foreground run goes on."""

    def __init__(self) -> None:
        self.spool: str | None = None
        self.offset = 0

    def pump(self) -> None:
        if self.spool is None:
            return
        with open(self.spool, "rb") as f:
            f.seek(self.offset)
            while chunk := f.read(1 << 16):
                sys.stdout.buffer.write(chunk)
                self.offset += len(chunk)
        sys.stdout.buffer.flush()


def _exit_code(result: RunResult) -> int:
    if result.state == "running":
        return 0
    if result.state == "timed_out":
        return 124
    if result.state == "cancelled":
        return 130
    if result.exit_code is not None:
        return result.exit_code
    return 128 + (result.signal or 9)


async def _run_verb(habitat: ShellHabitat, args: argparse.Namespace, request: Any) -> int:
    streamer = _Streamer()
    live = not args.json and not getattr(args, "background", False)

    async def progress(elapsed: float, line: str) -> None:
        if streamer.spool is None:  # the tab's newest run is the one we are waiting on
            streamer.spool = (await habitat.last(LastArgs(tab=request.tab, tail_lines=0))).spool
        streamer.pump()

    if isinstance(request, RunArgs):
        result = await habitat.run(request, progress if live else None)
    else:
        result = await habitat.rerun(request, progress if live else None)
    if args.json:
        emit_json(result)
        return _exit_code(result)
    if live:
        streamer.spool = result.spool
        streamer.pump()
    elif result.state != "running":
        sys.stdout.write(result.output)
    _err.print(_status_line(result), style="dim")
    if result.omitted_bytes and not live:
        _err.print(f"[{result.omitted_bytes} bytes omitted; full output: {result.spool}]")
    return _exit_code(result)


def _status_line(r: RunResult) -> str:
    if r.state == "running":
        return f"#{r.index} running in tab {r.tab} (pid {r.pid}); `habitat last --tab {r.tab}`"
    code = f"exit {r.exit_code}" if r.exit_code is not None else r.state
    if r.signal:
        code += f" (signal {r.signal})"
    return f"{code} · {r.duration_s:.2f}s · tab {r.tab} #{r.index}"


def cmd_run(args: argparse.Namespace) -> int:
    async def body() -> int:
        request = build_args(
            RunArgs,
            command=args.command,
            tab=args.tab,
            cwd=args.cwd,
            shell=args.shell,
            env=_parse_env(args.env),
            timeout_seconds=args.timeout_seconds,
            background=args.background,
            yield_after_seconds=args.yield_after_seconds,
            interactive=args.interactive,
        )
        async with open_shell(args) as habitat:
            return await _run_verb(habitat, args, request)

    return run_command(body)


def cmd_rerun(args: argparse.Namespace) -> int:
    async def body() -> int:
        request = build_args(
            RerunArgs,
            tab=args.tab,
            index=args.index,
            background=args.background,
            timeout_seconds=args.timeout_seconds,
            yield_after_seconds=args.yield_after_seconds,
        )
        async with open_shell(args) as habitat:
            return await _run_verb(habitat, args, request)

    return run_command(body)


R = TypeVar("R", bound=BaseModel)


def _verb(
    args: argparse.Namespace,
    call: Callable[[ShellHabitat], Awaitable[R]],
    show: Callable[[R], None],
    exit_code: Callable[[R], int] = lambda result: 0,
) -> int:
    """Open the habitat, call one verb, print the model (`--json`) or its rendering."""

    async def body() -> int:
        async with open_shell(args) as habitat:
            result = await call(habitat)
        if args.json:
            emit_json(result)
        else:
            show(result)
        return exit_code(result)

    return run_command(body)


def cmd_scene(args: argparse.Namespace) -> int:
    return _verb(args, lambda h: h.scene(), _show_scene)


def _show_scene(scene: SceneResult) -> None:
    table = Table("tab", "shell", "state", "cwd", "last run", title="habitat scene")
    for tab in scene.tabs:
        last = tab.last_run
        summary = "—"
        if last is not None:
            code = last.exit_code if last.exit_code is not None else last.state
            summary = f"#{last.index} `{last.command[:40]}` → {code} ({last.duration_s:.2f}s)"
        state = f"running (pid {tab.pid})" if tab.state == "running" else tab.state
        table.add_row(tab.name, tab.shell, state, tab.cwd, summary)
    _out.print(table)
    caps = scene.caps
    _out.print(
        f"[dim]{len(scene.tabs)}/{caps.max_tabs} tabs · {caps.history_rows} history "
        f"rows per tab · output cap {caps.output_cap_bytes} B[/dim]"
    )


def cmd_history(args: argparse.Namespace) -> int:
    return _verb(
        args,
        lambda h: h.history(build_args(HistoryArgs, tab=args.tab, limit=args.limit)),
        _show_history,
    )


def _show_history(result: HistoryResult) -> None:
    table = Table("#", "command", "state", "exit", "duration", "bytes", "cwd")
    for row in result.rows:
        table.add_row(
            str(row.index),
            row.command,
            row.state,
            "" if row.exit_code is None else str(row.exit_code),
            f"{row.duration_s:.2f}s",
            str(row.output_bytes),
            row.cwd,
        )
    _out.print(table)


def cmd_last(args: argparse.Namespace) -> int:
    def request() -> LastArgs:
        return build_args(
            LastArgs,
            tab=args.tab,
            index=args.index,
            head_lines=args.head_lines,
            tail_lines=args.tail_lines,
            since=args.since,
            grep=args.grep,
        )

    return _verb(args, lambda h: h.last(request()), _show_last)


def _show_last(result: LastResult) -> None:
    sys.stdout.write(result.output)
    state = "running" if result.running else f"exit {result.exit_code} ({result.state})"
    _err.print(
        f"#{result.index} `{result.command}` · {state} · {result.output_bytes} B · "
        f"cursor {result.cursor}",
        style="dim",
    )


def cmd_which(args: argparse.Namespace) -> int:
    def show(result: WhichResult) -> None:
        _out.print(
            f"{result.tab}: {result.shell} ({result.executable}, {result.version})\n"
            f"cwd {result.cwd} · {result.state}" + (f" · pid {result.pid}" if result.pid else "")
        )

    return _verb(args, lambda h: h.which(build_args(WhichArgs, tab=args.tab)), show)


def cmd_kill(args: argparse.Namespace) -> int:
    def show(result: KillResult) -> None:
        if not result.killed:
            _out.print(f"tab {result.tab}: nothing running")
            return
        _out.print(
            f"tab {result.tab} #{result.index}: SIG{result.signal.removeprefix('SIG')}"
            f" to {len(result.pids)} process(es); {len(result.remaining)} left"
        )

    return _verb(
        args,
        lambda h: h.kill(build_args(KillArgs, tab=args.tab, signal=args.signal)),
        show,
        lambda result: 0 if not result.remaining else 1,
    )


def cmd_close(args: argparse.Namespace) -> int:
    def show(result: CloseResult) -> None:
        _out.print(f"closed {result.tab}" + (" (killed its command)" if result.killed else ""))

    return _verb(args, lambda h: h.close(build_args(CloseArgs, tab=args.tab)), show)


def cmd_wait(args: argparse.Namespace) -> int:
    def show(result: WaitResult) -> None:
        detail = f" {result.match!r}" if result.match else ""
        _out.print(f"{result.reason}{detail} · tab {result.tab} #{result.index} · {result.state}")

    request = {"tab": args.tab, "until": args.until, "timeout_seconds": args.timeout_seconds}
    return _verb(
        args,
        lambda h: h.wait(build_args(WaitArgs, **request)),
        show,
        lambda result: 0 if result.reason in ("matched", "exited") else 1,
    )


def cmd_input(args: argparse.Namespace) -> int:
    def show(result: InputResult) -> None:
        _out.print(f"wrote {result.bytes_written} B to #{result.index}")

    return _verb(
        args,
        lambda h: h.input(build_args(InputArgs, tab=args.tab, text=args.text, eof=args.eof)),
        show,
    )
