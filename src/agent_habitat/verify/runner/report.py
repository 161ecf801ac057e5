"""The verify verbs' results: lean reports of an epoch, for a model to read and act on.

The runner's `VerifyEpoch` carries everything (every rung's full result with its 16 KiB
output tail and every diagnostic). What goes back to an agent is this: the state first,
each rung with its first diagnostics (new findings first, pre-existing ones counted), the
failing test with its assertion line, a short output tail only where it explains a failure,
and the spool path for the rest. A stale epoch says `stale` and `green: false`, always.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import Field

from ...regular import open_regular
from .. import Diagnostic, EpochState, Policy, RungName, RungResult, RungStatus, VerifyEpoch
from ..field_docs import DocumentedModel
from ..timing import Timing
from .accounting import TimeReport
from .as_of_now import LISTED_PATHS

__all__ = [
    "DiagnosticLine",
    "EpochReport",
    "ReportState",
    "RungReport",
    "VerifyCancelResult",
    "VerifyRunResult",
    "VerifyStatusResult",
    "epoch_report",
    "for_a_model",
    "rung_report",
]

NEW_SHOWN = 10
"""New findings an agent reads per rung (all are counted, and listed in the CLI's --json)."""
PREEXISTING_SHOWN = 3
"""Pre-existing findings (and warnings) an agent reads per rung (all are counted)."""
TAIL_BYTES = 1024
"""Output tail kept for a rung that failed without a parsed finding."""
_MESSAGE_CAP = 300
COLUMNED = frozenset({"tsc"})
"""The tools whose findings keep their column in every report: tsc locates an error as
`file(line,col)`, its one location (a TS2322 of `x: number = "a"` and of a later argument on
the same line are the same code and often the same message)."""
_COMMAND_CAP = 500

ReportState = EpochState | Literal["lost"]
"""The epoch's state; `lost` when the process that ran it ended before it finished."""


class DiagnosticLine(DocumentedModel):
    """One finding, located."""

    file: str | None = None
    """Path relative to the project root."""
    line: int | None = None
    col: int | None = None
    """The column, given only when another finding of the rung is on the same line (two
    errors there, rustc's two E0308 of one edited line, are told apart by it), or when the
    tool locates by it (`COLUMNED`: tsc prints `file(line,col)`, and an agent reads it so)."""
    code: str | None = None
    """Rule or error code (`F821`, `arg-type`, `AssertionError`)."""
    severity: Literal["error", "warning", "note"] = "error"
    """A warning or a note is listed after the errors and never counted: it cannot make a
    rung red; it is compared with HEAD only when the rung had an error to settle (else the
    rung's notes say it was not)."""
    message: str
    """The message's first line (a failing test's starts with its node id)."""
    source: str = ""
    """The tool: `ruff`, `mypy`, `pytest`, …"""
    preexisting: bool = False
    """True when HEAD has the same finding: counted, never red."""
    text: str | None = None
    """The source line it points at (a failing test: its assertion line)."""


class RungReport(DocumentedModel):
    """One rung, as far as it got."""

    rung: RungName
    task: str
    state: str
    """`waiting`, `running`, `green`, `red`, `skipped`, `error`, `cancelled`, `died`."""
    reason: str | None = None
    """Why it is not green, in one line."""
    tool: str | None = None
    duration_s: float | None = None
    exit_code: int | None = None
    signal: str | None = None
    """Signal name when its process died by one."""
    new_findings: int = 0
    """Findings the change introduced (these decide red)."""
    preexisting_findings: int = 0
    """Findings HEAD has too."""
    diagnostics: list[DiagnosticLine] = Field(default_factory=list)
    """New findings, then pre-existing ones, then warnings and notes (an agent reads the
    first of each: `for_a_model`)."""
    notes: list[str] = Field(default_factory=list)
    output_tail: str | None = None
    """The last output lines, only when it failed without a parsed finding."""
    command_line: str | None = None
    """What ran, only when it failed."""
    spool: str | None = None
    """Path of the rung's full output."""


class EpochReport(DocumentedModel):
    """One verify run bound to its snapshot."""

    epoch: int
    task: str
    """Task id of the run (`verify_status(task)`, `verify_cancel(task)`)."""
    state: ReportState
    """`queued`, `running`, `green`, `red`, `incomplete`, `nothing_to_verify`, `error`,
    `cancelled`, `died`, or `stale` (files changed since its snapshot: never green then)."""
    green: bool
    """True only when it finished green on a snapshot the tree still matches, over its
    policy's whole ladder."""
    covers: list[RungName] = Field(default_factory=list)
    """The rungs it ran when a `rung` request left out some of its policy's: its state
    speaks for these alone, and `green` is false (not a verdict on the ladder)."""
    verified_state: str | None = None
    """What the climb found on its own snapshot (a stale epoch keeps it here)."""
    stale: bool = False
    changed: list[str] = Field(default_factory=list)
    """Paths changed since its snapshot (the first ones)."""
    changed_count: int = 0
    moved_while_running: bool = False
    """True when the tree changed while it climbed: stale even once the files are back."""
    snapshot: str | None = None
    head: str | None = None
    policy: Policy | None = None
    requests: int = 1
    """Verify requests this run answers (coalesced)."""
    superseded_by: str | None = None
    touched: list[str] = Field(default_factory=list)
    """The change it verifies (the first paths)."""
    touched_count: int = 0
    rungs: list[RungReport] = Field(default_factory=list)
    reason: str | None = None
    """Why the ladder is incomplete or had nothing to verify."""
    selection: str | None = None
    """Which tests ran and why, in one line."""
    notes: list[str] = Field(default_factory=list)
    duration_s: float | None = None
    timing: Timing | None = None
    """Request to verdict, and where it went: the rungs plus the parts add up to `wall_s`."""
    finished_at: float | None = None
    """Unix time it ended."""


class VerifyRunResult(DocumentedModel):
    """`verify_run`: the ticket, and the finished epoch when waited for."""

    task: str
    """Task id of the run that answers the request."""
    epoch: int
    snapshot: str
    """The tree's snapshot when the request was taken."""
    state: ReportState
    """`queued` unless waited for; then the epoch's state."""
    green: bool
    """True only for a finished, green, not stale epoch."""
    summary: str
    """One line: the state and what to do next."""
    coalesced: bool = False
    """Merged into a run already queued or running."""
    superseded: str | None = None
    """The running task this request cancelled (implicit cancel)."""
    result: EpochReport | None = None
    """The finished epoch, with `wait=true`."""


class VerifyStatusResult(DocumentedModel):
    """`verify_status`: is the code as it is now green?"""

    green: bool
    """True only when the epoch finished green and the tree still matches its snapshot."""
    summary: str
    """One line: `green on …`, `stale: … changed since`, `running: …`."""
    stale: bool
    changed: list[str] = Field(default_factory=list)
    """Paths changed since the epoch's snapshot (the first ones)."""
    current_snapshot: str | None = None
    """The snapshot of the tree as it is now."""
    running: str | None = None
    """Task id of the run going on now."""
    queued: str | None = None
    """Task id of the run gathering requests."""
    epoch: EpochReport | None = None
    """The newest epoch (or the one asked for); None before the first verify."""
    time: TimeReport | None = None
    """Time accounting of the workspace and of the calling session."""
    served_by: str | None = None
    """Which process runs verify for this workspace; None when none does."""
    recorded: bool = False
    """True when this is the workspace's record (no runner in this process), not a live look."""
    # False while the project is not trusted: nothing of it has run (no warm-up, no rung).
    trusted: bool = True


class VerifyCancelResult(DocumentedModel):
    """`verify_cancel`."""

    cancelled: bool
    """True when a queued or running run was cancelled (its processes are gone)."""
    summary: str
    epoch: EpochReport | None = None
    """The cancelled run as it ended."""


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= _MESSAGE_CAP else line[: _MESSAGE_CAP - 1] + "…"


def _source_line(root: Path | None, diag: Diagnostic) -> str | None:
    if root is None or diag.file is None or diag.line is None or diag.source != "pytest":
        return None
    try:
        with open_regular(root / diag.file) as f:
            for number, raw in enumerate(f, 1):
                line = raw.decode("utf-8", "replace")
                if number == diag.line:
                    return line.strip()[:_MESSAGE_CAP]
    except OSError:
        return None
    return None


def _line(root: Path | None, diag: Diagnostic, *, col: bool = False) -> DiagnosticLine:
    return DiagnosticLine(
        file=diag.file,
        line=diag.line,
        col=diag.col if col else None,
        code=diag.code,
        severity=diag.severity,
        message=_first_line(diag.message),
        source=diag.source,
        preexisting=diag.preexisting,
        text=_source_line(root, diag),
    )


def _tail(output: str) -> str:
    data = output.strip().encode("utf-8", "replace")
    if len(data) <= TAIL_BYTES:
        return data.decode("utf-8", "replace")
    cut = data[-TAIL_BYTES:].decode("utf-8", "ignore")
    return cut.split("\n", 1)[-1] if "\n" in cut else cut


def rung_report(status: RungStatus, result: RungResult | None, root: Path | None) -> RungReport:
    """The rung as an agent reads it: errors new, then pre-existing (counted), then a few
    warnings and notes (listed, not counted: eslint's warnings are no new findings)."""
    report = RungReport(
        rung=status.rung,
        task=status.task,
        state=status.state,
        reason=status.reason,
        tool=status.tool,
        duration_s=status.duration_s,
        notes=status.notes,
    )
    if result is None:
        return report
    failed = result.state not in ("green", "skipped")
    errors = [d for d in result.diagnostics if d.severity == "error"]
    new = [d for d in errors if not d.preexisting]
    old = [d for d in errors if d.preexisting]
    lesser = [d for d in result.diagnostics if d.severity != "error"]
    report.exit_code, report.signal = result.exit_code, result.signal
    report.new_findings = result.new_findings or len(new)
    report.preexisting_findings = result.preexisting_findings or len(old)
    # Every finding: the CLI's --json and the host's API keep them all (`for_a_model` cuts
    # what an agent reads). Only those it reads get their source line, a file read each.
    shown = {id(d) for d in (*new[:NEW_SHOWN], *old[:PREEXISTING_SHOWN])}
    lines: Counter[tuple[str | None, int | None]] = Counter(
        (d.file, d.line) for d in result.diagnostics if d.line is not None
    )
    report.diagnostics = [
        _line(
            root if id(d) in shown else None,
            d,
            col=lines[(d.file, d.line)] > 1 or d.source in COLUMNED,
        )
        for d in (*new, *old, *lesser)
    ]
    report.spool = result.spool
    if failed:
        line = result.command_line
        # Cut visibly: parse 1.20.2's ended in "tests/test_parsetype.py tests/", a folder.
        report.command_line = (
            line if len(line) <= _COMMAND_CAP else line[: _COMMAND_CAP - 1] + "…"
        ) or None
        if not new and result.output.strip():
            report.output_tail = _tail(result.output)
    return report


def _first_findings(rung: RungReport) -> RungReport:
    diagnostics = rung.diagnostics
    new = [d for d in diagnostics if d.severity == "error" and not d.preexisting]
    old = [d for d in diagnostics if d.severity == "error" and d.preexisting]
    lesser = [d for d in diagnostics if d.severity != "error"]
    cut = [*new[:NEW_SHOWN], *old[:PREEXISTING_SHOWN], *lesser[:PREEXISTING_SHOWN]]
    if len(cut) == len(diagnostics):
        return rung
    return rung.model_copy(update={"diagnostics": cut})


def for_a_model(epoch: EpochReport) -> EpochReport:
    """`epoch` as an agent reads it: each rung's first new findings (`NEW_SHOWN`), then the
    first pre-existing ones and warnings (`PREEXISTING_SHOWN` each); the counts stay whole."""
    rungs = [_first_findings(r) for r in epoch.rungs]
    if all(a is b for a, b in zip(rungs, epoch.rungs, strict=True)):
        return epoch
    return epoch.model_copy(update={"rungs": rungs})


def _selection(epoch: VerifyEpoch) -> str | None:
    selection = epoch.result.selection if epoch.result else None
    if selection is None:
        return None
    what = "whole suite" if selection.full else f"{len(selection.tests)} test path(s)"
    shown = selection.reasons[:2]
    if not shown:
        return what
    rest = len(selection.reasons) - len(shown)
    tail = f"; {rest} more" if rest > 0 else ""
    why = "; ".join(shown)
    room = _MESSAGE_CAP - len(what) - len(": ") - len(tail)
    if len(why) > room:
        why = why[: room - 1] + "…"
    return f"{what}: {why}{tail}"


def epoch_report(epoch: VerifyEpoch, root: Path | None = None) -> EpochReport:
    """The lean report of `epoch`; `root` lets a failing test show its assertion line."""
    results = {r.rung: r for r in epoch.result.rungs} if epoch.result else {}
    return EpochReport(
        epoch=epoch.epoch,
        task=epoch.task,
        state=epoch.state,
        green=epoch.green,
        covers=epoch.covers,
        verified_state=epoch.verified_state,
        stale=epoch.stale,
        changed=epoch.changed[:LISTED_PATHS],
        changed_count=len(epoch.changed),
        moved_while_running=epoch.moved_while_running,
        snapshot=epoch.snapshot,
        head=epoch.head,
        policy=epoch.policy,
        requests=epoch.requests,
        superseded_by=epoch.superseded_by,
        touched=epoch.touched[:LISTED_PATHS],
        touched_count=len(epoch.touched),
        rungs=[rung_report(s, results.get(s.rung), root) for s in epoch.rungs],
        reason=epoch.result.reason if epoch.result else None,
        selection=_selection(epoch),
        notes=epoch.notes,
        duration_s=epoch.duration_s,
        timing=epoch.result.timing if epoch.result is not None else None,
        finished_at=epoch.finished_at,
    )
