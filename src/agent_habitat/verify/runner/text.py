"""The verify results as text for a model (and a person) to read: decision first.

The first line is the verdict (`state=… green=true|false`): a stale epoch reads
`state=stale green=false`, whatever it found on its old snapshot. Then what is not green
and why, the first findings (file:line code message; new first, pre-existing counted),
a failing test with its assertion line, and where the full output is. A text never
exceeds `TEXT_BUDGET`: what does not fit is counted and left to the spool files.
"""

from __future__ import annotations

import re

from ..ladder_names import POLICIES, UNCOMPARED, new_warnings
from .cancel_text import cancel_head

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:  # the models are read, never built, here: `habitat status` with no host
    # prints this text from the record without pydantic (cli/status_quiet.py)
    from .accounting import TimeReport
    from .report import (
        DiagnosticLine,
        EpochReport,
        RungReport,
        VerifyCancelResult,
        VerifyRunResult,
        VerifyStatusResult,
    )

__all__ = [
    "TEXT_BUDGET",
    "checked",
    "coverage",
    "epoch_summary",
    "not_run",
    "render_epoch",
    "render_time",
    "render_verify_cancel",
    "render_verify_run",
    "render_verify_status",
]

TEXT_BUDGET = 4096
"""Bytes of text at most for one result."""
_DIAGS_SHOWN = 6
_FINISHED = ("green", "red", "incomplete", "nothing_to_verify", "error", "cancelled", "died")


class _Budget:
    """Lines in order until the budget is spent; then one line saying what was left out."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.lines: list[str] = []
        self.used = 0
        self.dropped = 0

    def add(self, line: str) -> None:
        size = len(line.encode("utf-8")) + 1
        # Keep room for the closing line that counts what was dropped.
        if self.dropped or self.used + size > self.limit - 80:
            self.dropped += 1
            return
        self.lines.append(line)
        self.used += size

    def text(self) -> str:
        tail = [f"[{self.dropped} more lines left out; the spool files have everything]"]
        return "\n".join(self.lines + (tail if self.dropped else [])) + "\n"


def _paths(paths: list[str], count: int) -> str:
    shown = ", ".join(paths[:5])
    return shown + (f" (+{count - 5} more)" if count > 5 else "")


def coverage(epoch: EpochReport) -> str:
    """What a verdict of some rungs only leaves out (`covers`), in words; "" for a ladder."""
    if not epoch.covers:
        return ""
    left = [r for r in POLICIES[epoch.policy] if r not in epoch.covers] if epoch.policy else []
    out = f"{', '.join(epoch.covers)} only"
    if left:
        out += f"; {', '.join(left)} not run"
    return out + ": not a verdict on the ladder, green=false (verify_run without rung for it)"


def epoch_summary(epoch: EpochReport | None) -> str:
    """One line: the state, where, and what to do next. Never `green` for a stale epoch."""
    if epoch is None:
        return "never verified: run verify_run"
    where = f"epoch {epoch.epoch} ({epoch.task})"
    if epoch.state == "lost":
        return f"lost: {where} was running in a process that ended; run verify_run again"
    if epoch.state in ("queued", "running"):
        extra = ""
        if epoch.stale:
            extra = f"; already stale: {_paths(epoch.changed, epoch.changed_count)} changed"
        return f"{epoch.state}: {where}{extra}"
    if epoch.stale:
        when = "while it ran" if epoch.moved_while_running else "since"
        return (
            f"stale: {where} verified snapshot {epoch.snapshot} ({epoch.verified_state} there), "
            f"but {_paths(epoch.changed, epoch.changed_count)} changed {when}: not verified "
            "now; run verify_run again"
        )
    # A run cancelled while it gathered requests never took its snapshot.
    on = f" on {epoch.snapshot}" if epoch.snapshot else " before it took a snapshot"
    line = f"{epoch.state}{on}: {where}"
    failing = next((r for r in epoch.rungs if r.state not in ("green", "skipped")), None)
    if failing is not None and failing.reason:
        said = failing.reason  # "cancelled by request": the state is said once
        line += f"; {failing.rung} " + (
            said if said.startswith(str(failing.state)) else f"{failing.state}: {said}"
        )
    elif epoch.reason:
        line += f"; {epoch.reason}"
    if epoch.covers:
        line += f"; {coverage(epoch)}"
    return line


_SELECTED = re.compile(r"^(\d+) selected\b")
# A test rung's count of what passed (pytest's, cargo's and go test's notes say it): a filter,
# or a path that holds 300 tests, is "1 selected".
_PASSED = re.compile(r"\b(\d+) (?:test\(s\) )?passed\b")


def checked(epoch: EpochReport) -> str:
    """What a green epoch checked, in a few words: `ruff, mypy, pytest 12 passed`."""
    parts = []
    for rung in epoch.rungs:
        if rung.state == "skipped":
            continue
        part = rung.tool or rung.rung
        passed = next((m[1] for n in rung.notes if (m := _PASSED.search(n))), None)
        count = next((m[1] for n in rung.notes if (m := _SELECTED.match(n))), None)
        if passed is not None:
            part = f"{part} {passed} passed"
        elif count:
            part = f"{part} {count} selected"
        if rung.preexisting_findings:
            # A green over findings HEAD has too says so: plain "green" after an edit to a
            # failing test reads as fixed.
            what = "failing" if rung.rung.startswith("test.") else "finding(s)"
            part += f" ({rung.preexisting_findings} {what} at HEAD too: not red)"
        if part not in parts:  # one tool answering two rungs (cargo clippy) is named once
            parts.append(part)
    # Warnings that were not compared with HEAD may be HEAD's: one verify_status away.
    warned = new_warnings(
        d for rung in epoch.rungs if UNCOMPARED not in rung.notes for d in rung.diagnostics
    )
    return "; ".join(filter(None, (", ".join(parts) or "nothing ran", warned)))


def not_run(epoch: EpochReport) -> str:
    """The rungs a green epoch skipped, each with the first clause of its reason:
    `not run: compile.project (the change is only comments or blank lines), test.scoped
    (no test is affected by the change)`; "" when every rung ran. A green "ruff" alone read
    as if the type check and the tests had passed."""
    why: dict[str, list[str]] = {}
    for rung in epoch.rungs:
        if rung.state == "skipped":
            clause = re.split(r":\s|;\s|\s\(", rung.reason or "", maxsplit=1)[0].strip()
            why.setdefault(clause[:_CLAUSE], []).append(rung.rung)
    parts = [
        f"{', '.join(names)} ({clause})" if clause else ", ".join(names)
        for clause, names in why.items()
    ]
    return f"not run: {', '.join(parts)}" if parts else ""


_CLAUSE = 90
"""At most this much of a skipped rung's reason in a green summary: the rest is in verify_status."""


def _verdict(epoch: EpochReport) -> str:
    head = f"state={epoch.state} green={str(epoch.green).lower()} epoch={epoch.epoch}"
    head += f" task={epoch.task}"
    if epoch.snapshot:
        head += f" snapshot={epoch.snapshot}"
    if epoch.covers:
        head += f" rungs={','.join(epoch.covers)}"
    elif epoch.policy:
        head += f" policy={epoch.policy}"
    if epoch.duration_s is not None:
        head += f" {epoch.duration_s:.2f}s"
    return head


def _diag(d: DiagnosticLine) -> str:
    where = ":".join(str(x) for x in (d.file, d.line) if x is not None) or "?"
    kind = "" if d.severity == "error" else f"{d.severity} "
    return f"  {where} {kind}{d.code or d.source or 'error'} {d.message}"


def _rung_lines(out: _Budget, rung: RungReport) -> None:
    head = f"{rung.rung} {rung.state}"
    if rung.tool:
        head += f" ({rung.tool})"
    if rung.reason:
        head += f": {rung.reason}"
    if rung.signal:
        head += f" [signal {rung.signal}]"
    out.add(head)
    new = [d for d in rung.diagnostics if not d.preexisting and d.severity == "error"]
    for diag in new[:_DIAGS_SHOWN]:
        out.add(_diag(diag))
        if diag.text:
            out.add(f"    > {diag.text}")
    if rung.new_findings > min(len(new), _DIAGS_SHOWN):
        out.add(f"  … {rung.new_findings - min(len(new), _DIAGS_SHOWN)} more new findings")
    if rung.preexisting_findings:
        out.add(f"  ({rung.preexisting_findings} pre-existing at HEAD: counted, not red)")
    for note in rung.notes[:3]:
        out.add(f"  note: {note[:300]}")
    if rung.output_tail:
        if rung.command_line:
            out.add(f"  $ {rung.command_line[:300]}")
        out.add("  output tail:")
        for line in rung.output_tail.splitlines()[-15:]:
            out.add(f"  | {line[:300]}")
    if rung.spool:
        out.add(f"  full output: {rung.spool}")


def _epoch_into(out: _Budget, epoch: EpochReport) -> None:
    out.add(_verdict(epoch))
    out.add(epoch_summary(epoch))
    if epoch.rungs:
        prefix = "rungs (on the old snapshot): " if epoch.stale else "rungs: "
        out.add(prefix + " · ".join(f"{r.rung} {r.state}" for r in epoch.rungs))
    if epoch.state not in ("queued", "running") and not epoch.green:
        # In ladder order: a rung skipped for want of work comes before a later red one.
        for rung in epoch.rungs:
            if rung.state == "skipped" and rung.reason:
                out.add(f"{rung.rung} skipped: {rung.reason}")
            elif rung.state not in ("green", "skipped", "waiting"):
                _rung_lines(out, rung)
    if epoch.touched:
        out.add(f"touched: {_paths(epoch.touched, epoch.touched_count)}")
    if epoch.selection:
        out.add(f"selection: {epoch.selection}")
    for note in epoch.notes[:3]:
        out.add(f"note: {note[:300]}")


def render_epoch(epoch: EpochReport, limit: int = TEXT_BUDGET) -> str:
    out = _Budget(limit)
    _epoch_into(out, epoch)
    return out.text()


def render_time(report: TimeReport) -> str:
    """Where the time went: the session's account when there is one, else the workspace's."""
    account = report.session or report.workspace
    who = f"session {report.session_id}" if report.session else "workspace"
    return (
        f"time ({who}): wall {account.wall_s:.1f}s = active {account.active_s:.1f}s "
        f"(reasoning {account.reasoning_s:.1f}s + blocked {account.blocked_s:.1f}s) "
        f"+ idle {account.idle_s:.1f}s; environment {account.environment_s:.1f}s; "
        f"{account.calls} calls"
    )


def render_verify_run(result: VerifyRunResult) -> str:
    if result.result is not None:
        out = _Budget(TEXT_BUDGET)
        if result.superseded:
            out.add(f"(this request cancelled the running {result.superseded})")
        _epoch_into(out, result.result)
        return out.text()
    how = "joined the run already queued or running" if result.coalesced else "queued"
    text = (
        f"state={result.state} green=false task={result.task} epoch={result.epoch} "
        f"snapshot={result.snapshot}\n{how}; follow it with verify_status(task={result.task!r})"
        " or call verify_run(wait=true)\n"
    )
    if result.superseded:
        text += f"it cancels the running {result.superseded}\n"
    return text


def render_verify_status(result: VerifyStatusResult) -> str:
    out = _Budget(TEXT_BUDGET)
    if result.epoch is None:
        out.add(f"state=never green=false: {result.summary}")
    else:
        _epoch_into(out, result.epoch)
    if result.running and (result.epoch is None or result.running != result.epoch.task):
        out.add(f"running now: {result.running}")
    if result.queued:
        out.add(f"queued: {result.queued}")
    if result.current_snapshot:
        out.add(f"current snapshot: {result.current_snapshot}")
    if result.recorded or result.served_by is None:
        out.add(f"served by: {result.served_by or 'no verify runner serves this workspace'}")
    if result.time is not None:
        out.add(render_time(result.time))
    return out.text()


def render_verify_cancel(result: VerifyCancelResult) -> str:
    text = cancel_head(result.cancelled, result.summary)
    if result.epoch is not None:
        text += render_epoch(result.epoch, TEXT_BUDGET - len(text))
    return text
