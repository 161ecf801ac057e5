"""Every verb, once: name, models, the service call on a `Habitat`, annotations, descriptions.

The MCP tools (`shell_*` on the primary server, `terminal_*` on the escape server, other
groups under their own name such as `project_open`), the CLI subcommands (`habitat run`…)
and, later, the host's JSON API routes are all derived from `VERBS`. A new verb is one row
here plus its service function. Core: adapters read this table, it never imports them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from .project import ProjectOpenArgs, ProjectOpenResult
from .shell import Progress
from .shell import models as m

if TYPE_CHECKING:
    from .habitat import Habitat

__all__ = ["VERBS", "Call", "Group", "Progress", "SceneArgs", "Verb", "describe", "verb"]

Group = Literal["shell", "project", "verify", "file"]

Call = Callable[["Habitat", Any, Progress | None], Awaitable[BaseModel]]
"""`(habitat, validated args, progress or None) -> result model`."""


class SceneArgs(BaseModel):
    """`scene` takes no arguments."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Verb:
    """One verb. `description` is a template: {p} the tool prefix (`shell`, `terminal`),
    {cap} the output cap, {preview} the scene preview size, {tabs} the tab limit, {project}
    which project is open."""

    name: str
    args: type[BaseModel]
    result: type[BaseModel]
    call: Call
    summary: str
    """One line: the CLI command's help."""
    description: str
    example: str = ""
    """A command line shown by `habitat COMMAND --help`."""
    reports_progress: bool = False
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    group: Group = "shell"
    positional: tuple[str, ...] = ()
    """Fields the CLI also takes as bare positionals, in this order (`tab` also as --tab)."""
    cli: bool = True
    """False when a one-shot CLI process has nothing to do with the verb (`project_open`)."""

    def tool_name(self, prefix: str) -> str:
        """Shell verbs carry the server's prefix (`shell_run`, `terminal_run`); the other
        groups are named after their group on every server (`project_open`)."""
        return f"{prefix if self.group == 'shell' else self.group}_{self.name}"


def _size(n: int) -> str:
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n} bytes"


def describe(verb: Verb, habitat: Habitat, prefix: str) -> str:
    """The verb's description for this habitat (its caps, its open project)."""
    caps = habitat.config
    return verb.description.format(
        p=prefix,
        cap=_size(caps.output_cap_bytes),
        preview=_size(caps.preview_bytes),
        tabs=caps.max_tabs,
        project=habitat.project.describe(),
    )


_TAB = ("tab",)

VERBS: tuple[Verb, ...] = (
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
    Verb(
        name="open",
        group="project",
        args=ProjectOpenArgs,
        result=ProjectOpenResult,
        call=lambda h, a, p: h.project.open(a.path),
        idempotent=True,
        cli=False,  # a CLI process lives for one command: it has no open project to switch
        summary="open a project folder",
        description=(
            "Open a project folder: commands in tabs that still sit at the old project's "
            "folder start in the new one, and the tool list is refreshed. {project} Use it when "
            "the user points you at another repository."
        ),
    ),
)


def verb(name: str, group: Group = "shell") -> Verb:
    """The row named `name` in `group`; KeyError names what exists."""
    for row in VERBS:
        if (row.name, row.group) == (name, group):
            return row
    known = ", ".join(row.tool_name(row.group) for row in VERBS)
    raise KeyError(f"no verb {group}.{name}; known: {known}")
