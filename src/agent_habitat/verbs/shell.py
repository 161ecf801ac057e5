"""The shell verbs: tabs, runs, output, signals (DESIGN §3)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..shell import models as m
from .row import Verb

__all__ = ["SHELL_VERBS", "SceneArgs"]


class SceneArgs(BaseModel):
    """`scene` takes no arguments."""

    model_config = ConfigDict(extra="forbid")


_TAB = ("tab",)

SHELL_VERBS: tuple[Verb, ...] = (
    Verb(
        name="scene",
        args=SceneArgs,
        result=m.SceneResult,
        call=lambda h, a, p: h.shell.scene(),
        read_only=True,
        summary="every tab at once",
        example="habitat scene --json",
        description=(
            "See every shell tab at once: name, shell, cwd, state (idle/running/closed), the "
            "pid of a running command, its last run (index, command, exit code, duration) and "
            "a short output preview ({preview}), plus the caps. Use it first to see what is "
            "already running, and after a restart: runs outlive the server."
        ),
    ),
    Verb(
        name="run",
        args=m.RunArgs,
        result=m.RunResult,
        call=lambda h, a, p: h.shell.run(a, p),
        reports_progress=True,
        positional=("command", "tab"),
        summary="run a command in a tab",
        example="habitat run 'make -j2' --tab build --timeout-seconds 600",
        description=(
            "Run a shell command line in a named tab (default `main`; created on first use; at "
            "most {tabs} tabs). A tab keeps cwd and exported variables between commands, like a "
            "terminal. Foreground (default) waits for the exit and returns state and exit code "
            "first, then the output: ANSI stripped, capped at {cap} (head + tail; the rest "
            "stays in the spool file, read it with {p}_last). `timeout_seconds` kills the whole "
            "process tree at the limit. `yield_after_seconds` returns state=running after that "
            "long and lets it go on; `background=true` returns at once with the pid; follow "
            "either with {p}_wait or {p}_last. stdin is /dev/null unless `interactive=true` "
            "(then {p}_input writes to it). A tab that is busy refuses a second command: use "
            "another tab; calls on different tabs run in parallel. Sends progress (elapsed "
            "seconds, last output line) when asked."
        ),
    ),
    Verb(
        name="history",
        args=m.HistoryArgs,
        result=m.HistoryResult,
        call=lambda h, a, p: h.shell.history(a),
        read_only=True,
        positional=_TAB,
        summary="a tab's runs (no output bodies)",
        example="habitat history build --limit 5",
        description=(
            "List a tab's past runs, oldest first, without their output: index, command, cwd, "
            "state, exit code, start time, duration, output size. Pass an index to {p}_last or "
            "{p}_rerun."
        ),
    ),
    Verb(
        name="rerun",
        args=m.RerunArgs,
        result=m.RunResult,
        call=lambda h, a, p: h.shell.rerun(a, p),
        reports_progress=True,
        positional=_TAB,
        summary="run a history entry again (default the last)",
        example="habitat rerun build --index 3",
        description=(
            "Run one of a tab's earlier commands again (default its last) in the same tab; "
            "`background`, `timeout_seconds` and `yield_after_seconds` work as in {p}_run, and "
            "the result is the same as {p}_run's. Sends progress when asked."
        ),
    ),
    Verb(
        name="last",
        args=m.LastArgs,
        result=m.LastResult,
        call=lambda h, a, p: h.shell.last(a),
        read_only=True,
        positional=_TAB,
        summary="output of a run (live while it runs)",
        example="habitat last web --tail-lines 20 --grep 'error|warn'",
        description=(
            "Read the output of a run (default the tab's last): `head_lines` / `tail_lines` "
            "windows, a `grep` regex, or `since` a byte cursor from an earlier result for only "
            "the newer output. While the command runs this is its live output, with "
            "running=true and a cursor to continue from. Capped at {cap}."
        ),
    ),
    Verb(
        name="which",
        args=m.WhichArgs,
        result=m.WhichResult,
        call=lambda h, a, p: h.shell.which(a),
        read_only=True,
        positional=_TAB,
        summary="a tab's shell, cwd and state",
        example="habitat which build",
        description=(
            "Tell which shell a tab uses: kind, executable and version, its cwd, its state and "
            "the pid of a running command."
        ),
    ),
    Verb(
        name="kill",
        args=m.KillArgs,
        result=m.KillResult,
        call=lambda h, a, p: h.shell.kill(a),
        destructive=True,
        positional=_TAB,
        summary="kill the tab's running process tree",
        example="habitat kill web --signal INT",
        description=(
            "Kill the whole process tree of the command running in a tab (SIGTERM, then "
            "SIGKILL after a grace period; or the `signal` given). Returns the pids signalled "
            "and any still alive. The tab stays open for the next command."
        ),
    ),
    Verb(
        name="close",
        args=m.CloseArgs,
        result=m.CloseResult,
        call=lambda h, a, p: h.shell.close(a),
        destructive=True,
        positional=_TAB,
        summary="kill if needed and close the tab",
        example="habitat close web",
        description="Close a tab, killing its running command first, and free its slot.",
    ),
    Verb(
        name="wait",
        args=m.WaitArgs,
        result=m.WaitResult,
        call=lambda h, a, p: h.shell.wait(a, p),
        reports_progress=True,
        read_only=True,
        positional=_TAB,
        summary="wait for a regex in the output, the exit, or a timeout",
        example="habitat wait web --until 'ready on :\\d+' --timeout-seconds 60",
        description=(
            "Wait on the server, bounded by `timeout_seconds` (default 30), for a tab's running "
            "command: returns when new output matches the `until` regex, when the command "
            "exits, or at the timeout, with the new output seen meanwhile (capped) and a cursor "
            "for {p}_last. Cheaper than polling. Sends progress when asked."
        ),
    ),
    Verb(
        name="input",
        args=m.InputArgs,
        result=m.InputResult,
        call=lambda h, a, p: h.shell.input(a),
        positional=("tab", "text"),
        summary="write to the stdin of a tab's interactive command",
        example="habitat input repl $'print(1)\\n'",
        description=(
            "Write `text` to the stdin of a tab's running interactive command (one started "
            "with interactive=true); add the newline yourself; `eof=true` closes stdin "
            "afterwards."
        ),
    ),
)
