"""Request and result models of the shell verbs (DESIGN §3).

These are the contract: the MCP tools take the `*Args` models as their input schema
and return the `*Result` models dumped as structured content; the CLI's `--json`
prints the same dumps.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ..errors import UsageError
from ..limits import (
    INDEX_MAX,
    MAX_PATTERN_CHARS,
    MAX_SECONDS,
    ArgText,
    OptEnvMap,
    OptPathText,
    StdinText,
)
from ..proc.signals import parse_signal
from ..secrets import shown_command

__all__ = [
    "TAB_NAME_PATTERN",
    "Caps",
    "CloseArgs",
    "CloseResult",
    "HistoryArgs",
    "HistoryResult",
    "HistoryRow",
    "InputArgs",
    "InputResult",
    "KillArgs",
    "KillResult",
    "LastArgs",
    "LastResult",
    "LeftProcess",
    "RerunArgs",
    "RunArgs",
    "RunResult",
    "RunState",
    "SceneResult",
    "TabScene",
    "TabState",
    "WaitArgs",
    "WaitResult",
    "WhichArgs",
    "WhichResult",
]

TAB_NAME_PATTERN = r"^[A-Za-z0-9_.-]{1,32}$"

RunState = Literal["running", "exited", "killed", "timed_out", "cancelled", "lost"]
"""`exited`: ended by itself (see exit_code); `killed`: by `kill`/`close` or a signal;
`timed_out`: killed at `timeout_seconds`; `cancelled`: its request was cancelled;
`lost`: vanished while no habitat watched it, with the output captured so far."""
TabState = Literal["idle", "running", "closed"]


ShownCommand = Annotated[str, AfterValidator(shown_command)]
"""A command line in a result: its secrets (typed inline too) as `***`, whoever built it."""


class _Args(BaseModel):
    # Strict: `signal: true` is not SIGHUP and `background: "yes"` is not true; JSON's numbers
    # still fit (an int where a float is asked). NaN and infinity are no durations.
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, defer_build=True)


class _Model(BaseModel):
    # Each model's validator and serializer are built on first use, not at import: a command
    # uses two or three of these (`run`: its args and result), and the parser imports them all.
    model_config = ConfigDict(defer_build=True)


DEFAULT_TAB = "main"
Tab = Field(
    default=DEFAULT_TAB, pattern=TAB_NAME_PATTERN, description="Tab name; created on first use."
)


def _tab_name(name: str) -> str:
    if re.fullmatch(TAB_NAME_PATTERN, name) is None:
        raise ValueError("a tab name is 1-32 letters, digits, `_`, `.` or `-`")
    return name


TabRef = Annotated[str, AfterValidator(_tab_name)]
"""A tab that should exist: its name is checked, but the schema leaves the pattern to the
verbs that create tabs (`run`), as a model names a tab it has already used."""
TabOf = Field(default=DEFAULT_TAB, description="Tab name.")


class RunArgs(_Args):
    """Run one command in a tab."""

    command: ArgText = Field(min_length=1, description="Shell command line.")
    tab: str = Tab
    cwd: OptPathText = Field(default=None, min_length=1, description="Default the tab's cwd.")
    shell: OptPathText = Field(
        default=None,
        min_length=1,
        description="bash, sh, zsh, fish or pwsh; default the tab's.",
    )
    env: OptEnvMap = Field(default=None, description="Extra variables for this command only.")
    timeout_seconds: float | None = Field(
        default=None,
        gt=0,
        le=MAX_SECONDS,
        description="Kill the process tree after this long.",
    )
    background: bool = Field(default=False, description="Return at once with the pid.")
    yield_after_seconds: float | None = Field(
        default=None,
        ge=0,
        le=MAX_SECONDS,
        description="Return state=running after this long.",
    )
    interactive: bool = Field(default=False, description="Keep stdin open for `input`.")


class LeftProcess(_Model):
    """A process a run started that was still alive when the run ended."""

    pid: int
    command: ShownCommand = Field(description="Its command line.")
    index: int = Field(description="The tab's run that started it.")


_ERROR_LINES = (
    "A failed run's lines that look like errors, from the part of its output left out of "
    "`output` (at most 10; `last` with `grep` finds every line)."
)
_ERROR_LINES_MORE = "Error-looking lines left out beyond those in `error_lines`."


class RunResult(_Model):
    """What a run did, or is doing."""

    tab: str
    index: int = Field(description="The run's index in the tab's history.")
    command: ShownCommand
    pid: int | None
    state: RunState
    exit_code: int | None = Field(description="Exit status; None while running or when killed.")
    signal: int | None = Field(default=None, description="Signal that ended it, if any.")
    timed_out: bool = False
    duration_s: float
    cwd: str = Field(description="Where the command started.")
    output: str = Field(description="Capped output: head and tail, ANSI stripped.")
    omitted_bytes: int = Field(description="Bytes of output left out between head and tail.")
    output_bytes: int = Field(description="Total bytes of output in the spool so far.")
    spool: str = Field(description="Path of the raw output file (nothing is lost).")
    cursor: int = Field(description="Byte offset to pass as `since` to `last` for newer output.")
    left_running: list[LeftProcess] = Field(
        default_factory=list,
        description="Processes the run started that still ran when it ended (daemons, "
        "`cmd &`); `kill`/`close` on the tab stops them.",
    )
    error_lines: list[str] = Field(default_factory=list, description=_ERROR_LINES)
    error_lines_more: int = Field(default=0, description=_ERROR_LINES_MORE)


class Caps(_Model):
    max_tabs: int
    history_rows: int
    output_cap_bytes: int
    preview_bytes: int


class LastRunSummary(_Model):
    index: int
    command: ShownCommand
    state: RunState
    exit_code: int | None
    duration_s: float


class TabScene(_Model):
    name: str
    shell: str
    cwd: str
    state: TabState
    pid: int | None = Field(description="Pid of the running command, if any.")
    last_run: LastRunSummary | None
    preview: str = Field(description="Tail of the last run's output, capped.")
    left_running: list[LeftProcess] = Field(
        default_factory=list,
        description="Processes ended runs of the tab left running, still alive now; "
        "`kill`/`close` on the tab stops them.",
    )


class SceneResult(_Model):
    """Every tab at once."""

    tabs: list[TabScene]
    caps: Caps


class HistoryArgs(_Args):
    tab: TabRef = TabOf
    limit: int = Field(default=20, ge=1, le=1000, description="Newest rows to return.")


class HistoryRow(_Model):
    index: int
    command: ShownCommand
    cwd: str
    state: RunState
    exit_code: int | None
    started_at: float
    duration_s: float
    output_bytes: int
    background: bool


class HistoryResult(_Model):
    tab: str
    rows: list[HistoryRow] = Field(description="Oldest first; no output bodies.")


class RerunArgs(_Args):
    tab: TabRef = TabOf
    index: int | None = Field(
        default=None, ge=1, le=INDEX_MAX, description="History index; default the last."
    )
    background: bool = Field(default=False, description="Return at once with the pid.")
    timeout_seconds: float | None = Field(
        default=None,
        gt=0,
        le=MAX_SECONDS,
        description="Kill the process tree after this long.",
    )
    yield_after_seconds: float | None = Field(
        default=None,
        ge=0,
        le=MAX_SECONDS,
        description="Return state=running after this long.",
    )


class LastArgs(_Args):
    tab: TabRef = TabOf
    index: int | None = Field(
        default=None, ge=1, le=INDEX_MAX, description="History index; default the last."
    )
    head_lines: int | None = Field(
        default=None, ge=0, le=INDEX_MAX, description="Only the first N lines."
    )
    tail_lines: int | None = Field(
        default=None, ge=0, le=INDEX_MAX, description="Only the last N lines."
    )
    since: int | None = Field(
        default=None,
        ge=0,
        le=INDEX_MAX,
        description="An earlier `cursor`: only newer output.",
    )
    grep: str | None = Field(
        default=None, max_length=MAX_PATTERN_CHARS, description="Regex: only matching lines."
    )


class LastResult(_Model):
    tab: str
    index: int
    command: ShownCommand
    state: RunState
    running: bool
    exit_code: int | None
    signal: int | None = Field(default=None, description="The signal that ended it, if any.")
    output: str
    omitted_bytes: int
    output_bytes: int
    cursor: int = Field(description="Byte offset to pass as `since` next time.")
    spool: str
    error_lines: list[str] = Field(default_factory=list, description=_ERROR_LINES)
    error_lines_more: int = Field(default=0, description=_ERROR_LINES_MORE)


class WhichArgs(_Args):
    tab: TabRef = TabOf


class WhichResult(_Model):
    tab: str
    shell: str = Field(description="Shell kind: bash, sh, zsh, fish or pwsh.")
    executable: str
    version: str
    cwd: str
    pid: int | None
    state: TabState


def _known_signal(value: str | int) -> str | int:
    """Refused by the model, so the error names `signal` (`shell_kill` parses it again)."""
    try:
        parse_signal(value)
    except UsageError as exc:
        raise ValueError(str(exc)) from None
    return value


class KillArgs(_Args):
    tab: TabRef = Field(description="Tab name.")
    signal: Annotated[str | int, AfterValidator(_known_signal)] = Field(
        default="TERM", description="KILL, INT, HUP… or a number."
    )


class KillResult(_Model):
    tab: str
    index: int | None
    killed: bool = Field(description="False when nothing was running.")
    pids: list[int] = Field(description="Pids that were signalled.")
    signal: str
    remaining: list[int] = Field(description="Pids still alive afterwards (should be empty).")
    tracking: Literal["cgroup", "marker"] = Field(
        default="cgroup",
        description="How the run's processes were found: `cgroup` (all of them; absent from "
        "a lean result) or `marker` (its session, children and HABITAT_RUN_ID; see "
        "`untracked`).",
    )
    untracked: str | None = Field(
        default=None, description="What could not be looked for, when something could not."
    )


class CloseArgs(_Args):
    tab: TabRef = Field(description="Tab name.")


class CloseResult(_Model):
    tab: str
    killed: bool
    open_tabs: list[str]


class WaitArgs(_Args):
    tab: TabRef = TabOf
    until: str | None = Field(
        default=None, max_length=MAX_PATTERN_CHARS, description="Regex to wait for in new output."
    )
    timeout_seconds: float = Field(
        default=30, gt=0, le=3600, description="Give up after this long (the run goes on)."
    )


class WaitResult(_Model):
    tab: str
    index: int | None
    reason: Literal["matched", "exited", "timeout", "not_running"]
    match: str | None = None
    state: RunState | None
    exit_code: int | None
    signal: int | None = Field(default=None, description="The signal that ended it, if any.")
    output: str = Field(description="Capped new output seen while waiting.")
    cursor: int


class InputArgs(_Args):
    tab: TabRef = Field(description="Tab name.")
    text: StdinText = Field(description="Text to write; add the newline yourself.")
    eof: bool = Field(default=False, description="Close stdin after writing.")


class InputResult(_Model):
    tab: str
    index: int
    bytes_written: int
    eof: bool
