"""The shell verbs as tools, for a prefix: `shell_*` (primary) or `terminal_*` (escape)."""

from __future__ import annotations

from typing import Any

import mcp.types as types
from pydantic import BaseModel

from agent_habitat.shell.models import (
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

from .service import Progress, ShellService
from .tools import ToolDef

__all__ = ["SceneArgs", "shell_tools"]


class SceneArgs(BaseModel):
    """`scene` takes no arguments."""

    model_config = {"extra": "forbid"}


_READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
_DESTRUCTIVE = types.ToolAnnotations(destructive_hint=True, open_world_hint=False)

_DESCRIPTIONS = {
    "scene": (
        "See every shell tab at once: name, shell, cwd, state (idle/running/closed), the pid of "
        "a running command, its last run (index, command, exit code, duration) and a short "
        "output preview ({preview}), plus the caps. Use it first to see what is already running, "
        "and after a restart: runs outlive the server."
    ),
    "run": (
        "Run a shell command line in a named tab (default `main`; created on first use; at most "
        "{tabs} tabs). A tab keeps cwd and exported variables between commands, like a terminal. "
        "Foreground (default) waits for the exit and returns state and exit code first, then "
        "the output: ANSI stripped, capped at {cap} (head + tail; the rest stays in the spool "
        "file, read it with {p}_last). `timeout_seconds` kills the whole process tree at the "
        "limit. `yield_after_seconds` returns state=running after that long and lets it go on; "
        "`background=true` returns at once with the pid; follow either with {p}_wait or "
        "{p}_last. stdin is /dev/null unless `interactive=true` (then {p}_input writes to it). "
        "A tab that is busy refuses a second command: use another tab; calls on different tabs "
        "run in parallel. Sends progress (elapsed seconds, last output line) when asked."
    ),
    "history": (
        "List a tab's past runs, oldest first, without their output: index, command, cwd, "
        "state, exit code, start time, duration, output size. Pass an index to {p}_last or "
        "{p}_rerun."
    ),
    "rerun": (
        "Run one of a tab's earlier commands again (default its last) in the same tab; "
        "`background`, `timeout_seconds` and `yield_after_seconds` work as in {p}_run, and the "
        "result is the same as {p}_run's. Sends progress when asked."
    ),
    "last": (
        "Read the output of a run (default the tab's last): `head_lines` / `tail_lines` "
        "windows, a `grep` regex, or `since` a byte cursor from an earlier result for only the "
        "newer output. While the command runs this is its live output, with running=true and a "
        "cursor to continue from. Capped at {cap}."
    ),
    "which": (
        "Tell which shell a tab uses: kind, executable and version, its cwd, its state and the "
        "pid of a running command."
    ),
    "kill": (
        "Kill the whole process tree of the command running in a tab (SIGTERM, then SIGKILL "
        "after a grace period; or the `signal` given). Returns the pids signalled and any still "
        "alive. The tab stays open for the next command."
    ),
    "close": "Close a tab, killing its running command first, and free its slot.",
    "wait": (
        "Wait on the server, bounded by `timeout_seconds` (default 30), for a tab's running "
        "command: returns when new output matches the `until` regex, when the command exits, or "
        "at the timeout, with the new output seen meanwhile (capped) and a cursor for "
        "{p}_last. Cheaper than polling. Sends progress when asked."
    ),
    "input": (
        "Write `text` to the stdin of a tab's running interactive command (one started with "
        "interactive=true); add the newline yourself; `eof=true` closes stdin afterwards."
    ),
}


def _size(n: int) -> str:
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n} bytes"


def shell_tools(service: ShellService, prefix: str) -> list[ToolDef]:
    """The ten shell verbs named `{prefix}_<verb>`, bound to `service`; caps from its config."""
    caps = service.config
    words = {
        "p": prefix,
        "cap": _size(caps.output_cap_bytes),
        "preview": _size(caps.preview_bytes),
        "tabs": caps.max_tabs,
    }

    async def scene(args: Any, progress: Progress | None) -> BaseModel:
        return await service.scene()

    async def run(args: Any, progress: Progress | None) -> BaseModel:
        return await service.run(args, progress)

    async def rerun(args: Any, progress: Progress | None) -> BaseModel:
        return await service.rerun(args, progress)

    async def wait(args: Any, progress: Progress | None) -> BaseModel:
        return await service.wait(args, progress)

    async def history(args: Any, progress: Progress | None) -> BaseModel:
        return await service.history(args)

    async def last(args: Any, progress: Progress | None) -> BaseModel:
        return await service.last(args)

    async def which(args: Any, progress: Progress | None) -> BaseModel:
        return await service.which(args)

    async def kill(args: Any, progress: Progress | None) -> BaseModel:
        return await service.kill(args)

    async def close(args: Any, progress: Progress | None) -> BaseModel:
        return await service.close(args)

    async def input_(args: Any, progress: Progress | None) -> BaseModel:
        return await service.input(args)

    def make(
        verb: str, args: type[BaseModel], result: type[BaseModel], handler: Any, **kw: Any
    ) -> ToolDef:
        return ToolDef(
            name=f"{prefix}_{verb}",
            args=args,
            result=result,
            description=_DESCRIPTIONS[verb].format(**words),
            handler=handler,
            **kw,
        )

    return [
        make("scene", SceneArgs, SceneResult, scene, annotations=_READ_ONLY),
        make("run", RunArgs, RunResult, run, reports_progress=True),
        make("history", HistoryArgs, HistoryResult, history, annotations=_READ_ONLY),
        make("rerun", RerunArgs, RunResult, rerun, reports_progress=True),
        make("last", LastArgs, LastResult, last, annotations=_READ_ONLY),
        make("which", WhichArgs, WhichResult, which, annotations=_READ_ONLY),
        make("kill", KillArgs, KillResult, kill, annotations=_DESTRUCTIVE),
        make("close", CloseArgs, CloseResult, close, annotations=_DESTRUCTIVE),
        make("wait", WaitArgs, WaitResult, wait, reports_progress=True, annotations=_READ_ONLY),
        make("input", InputArgs, InputResult, input_),
    ]
