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

SHELL_VERBS = (
    Verb(
        name="scene",
        args=SceneArgs,
        result=m.SceneResult,
        call=lambda h, a, p: h.shell.scene(),
        read_only=True,
        summary="every tab at once",
        example="habitat scene --json",
        description=(
            "Every tab at once: shell, cwd, state, running pid, last run, a {preview} output "
            "preview, the caps. Call it first: runs outlive the server."
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
            "Run a command line in a tab (at most {tabs} tabs; it keeps cwd and exported "
            "variables). Returns state, exit code and output (ANSI stripped, head and tail "
            "capped at {cap}; {p}_last reads the rest), or state=running on "
            "`yield_after_seconds`/`background` ({p}_wait follows it). A busy tab refuses a "
            "second command."
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
            "A tab's past runs, oldest first, without output; pass an index to {p}_last or "
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
            "Run a tab's earlier command again (default its last); arguments and result as {p}_run."
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
            "A run's output (default the tab's last), live while it runs, cut by the arguments. "
            "Capped at {cap}."
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
            "Which shell a tab uses (kind, executable, version), with its cwd, state and running "
            "pid."
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
            "Kill a tab's running process tree (TERM, then KILL after a grace period, unless "
            "`signal`); returns the pids signalled and any still alive."
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
            "Wait until a tab's new output matches `until`, the command exits, or "
            "`timeout_seconds`; returns the new output and a cursor."
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
            "Write `text` to the stdin of a tab's running command started with "
            "`interactive=true`; `eof=true` closes stdin after."
        ),
    ),
)
