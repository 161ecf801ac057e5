"""Rich rendering of a climb: a live table fed by the bus events, and the final result."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from ..events import Event, EventBus
from ..terminal_words import for_terminal
from ..verify import Diagnostic, LadderResult, RungName, RungResult
from .verdict_text import render_timing

__all__ = ["LadderView", "render_result"]

STYLE = {
    "green": "bold green",
    "red": "bold red",
    "skipped": "dim",
    "error": "bold yellow",
    "cancelled": "yellow",
    "died": "bold magenta",
    "incomplete": "bold yellow",
    "nothing_to_verify": "bold blue",
    "running": "cyan",
    "waiting": "dim",
}
_DIAGNOSTICS_SHOWN = 8
_PREEXISTING_SHOWN = 5


def _last_line(spool: str | None) -> str:
    if not spool:
        return ""
    try:
        with open(spool, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 2048))
            lines = f.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1][:120] if lines else ""


class LadderView:
    """A live table of the rungs while they climb; subscribe it to the climb's bus."""

    def __init__(self, console: Console, rungs: Sequence[RungName], bus: EventBus) -> None:
        self.console = console
        self.rows: dict[str, dict[str, object]] = {
            r: {"state": "waiting", "started": None, "duration": None, "detail": "", "spool": None}
            for r in rungs
        }
        self._unsubscribe = bus.subscribe(self._on_event)
        self._live = Live(
            console=console, refresh_per_second=8, transient=True, get_renderable=self._table
        )

    def _on_event(self, event: Event) -> None:
        rung = event.data.get("rung")
        if rung not in self.rows:
            return
        row = self.rows[rung]
        if event.kind == "environment.task.started":
            row.update(state="running", started=time.monotonic(), spool=event.data.get("spool"))
        else:
            row.update(
                state=event.data.get("state", "?"),
                duration=event.data.get("duration_s"),
                detail=event.data.get("reason") or "",
            )

    def _table(self) -> RenderableType:
        table = Table(box=None, show_header=False, pad_edge=False)
        for rung, row in self.rows.items():
            state = str(row["state"])
            started = row["started"]
            if state == "running" and isinstance(started, float):
                elapsed = f"{time.monotonic() - started:5.1f}s"
                status: RenderableType = Spinner("dots", text=Text(" running", style=STYLE[state]))
                detail = _last_line(row["spool"] if isinstance(row["spool"], str) else None)
            else:
                duration = row["duration"]
                elapsed = f"{duration:5.2f}s" if isinstance(duration, float | int) else ""
                status = Text(f"  {state}", style=STYLE.get(state, ""))
                detail = str(row["detail"])
            table.add_row(Text(rung, style="bold"), status, elapsed, Text(detail, style="dim"))
        return table

    def __enter__(self) -> LadderView:
        self._live.__enter__()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._unsubscribe()
        self._live.__exit__(et, ev, tb)


def _where(diag: Diagnostic) -> str:
    where = ":".join(str(x) for x in (diag.file, diag.line, diag.col) if x is not None)
    message = diag.message.splitlines()[0] if diag.message else ""
    return f"{where}: {diag.code or diag.severity}: {message}"


def _rung_block(rung: RungResult) -> list[RenderableType]:
    head = Text.assemble(
        (f"{rung.rung:<16}", "bold"),
        (f"{rung.state:<9}", STYLE.get(rung.state, "")),
        (f"{rung.duration_s:6.2f}s  ", ""),
        (rung.tool or "", "cyan"),
    )
    out: list[RenderableType] = [head]
    if rung.reason:
        out.append(
            Text(f"    {for_terminal(rung.reason)}", style="dim" if rung.state == "skipped" else "")
        )
    if rung.command_line and (
        rung.state in ("error", "died") or (rung.state == "red" and not rung.diagnostics)
    ):
        out.append(Text(f"    $ {rung.command_line[:300]}", style="dim"))
    for note in rung.notes:
        out.append(Text(f"    note: {note}", style="dim italic"))
    errors = [d for d in rung.diagnostics if d.severity == "error"]  # a warning cannot be red
    new = [d for d in errors if not d.preexisting]
    old = [d for d in errors if d.preexisting]
    for diag in new[:_DIAGNOSTICS_SHOWN]:
        out.append(Text(f"    {_where(diag)}", style="red"))
    if len(new) > _DIAGNOSTICS_SHOWN:
        out.append(Text(f"    … {len(new) - _DIAGNOSTICS_SHOWN} more new", style="dim"))
    if old:
        # Listed, never hidden: they are at HEAD too, so they do not decide the rung.
        out.append(Text(f"    {len(old)} pre-existing (at {rung.baseline}):", style="dim"))
        for diag in old[:_PREEXISTING_SHOWN]:
            out.append(Text(f"      {_where(diag)}", style="dim"))
        if len(old) > _PREEXISTING_SHOWN:
            out.append(Text(f"      … {len(old) - _PREEXISTING_SHOWN} more", style="dim"))
    if rung.state in ("died", "error") and rung.output and not rung.diagnostics:
        tail = "\n".join(rung.output.strip().splitlines()[-5:])
        out.append(Text(f"    {tail}", style="dim"))
    if rung.spool and rung.state not in ("green", "skipped"):
        out.append(Text(f"    output: {Path(rung.spool)}", style="dim"))
    return out


def render_result(console: Console, result: LadderResult) -> None:
    """The climb's verdict, each rung with its diagnostics, and the test selection."""
    blocks: list[RenderableType] = []
    for rung in result.rungs:
        blocks.extend(_rung_block(rung))
    tests_ran = any(r.rung.startswith("test.") and r.state != "skipped" for r in result.rungs)
    # A selection is the work of a test rung: shown only when one ran.
    if result.selection is not None and tests_ran:
        sel = result.selection
        what = "whole suite" if sel.full else f"{len(sel.tests)} test path(s)"
        blocks.append(Text(f"selection: {what}", style="bold"))
        for reason in sel.reasons[:6]:
            blocks.append(Text(f"    {reason}", style="dim"))
        if len(sel.reasons) > 6:
            blocks.append(Text(f"    … {len(sel.reasons) - 6} more", style="dim"))
    touched = ", ".join(result.touched[:6]) + (" …" if len(result.touched) > 6 else "")
    blocks.append(
        Text.assemble(
            ("ladder ", "bold"),
            (result.state.upper().replace("_", " "), STYLE.get(result.state, "")),
            f"  policy {result.policy}"
            + (f"  snapshot {result.snapshot}" if result.snapshot else "")
            + f"  {result.duration_s:.2f}s",
            (f"  touched: {touched or 'nothing'}", "dim"),
        )
    )
    if result.reason:
        blocks.append(Text(f"    {for_terminal(result.reason)}", style=STYLE.get(result.state, "")))
    if result.timing is not None:
        blocks.append(Text(render_timing(result.timing.model_dump()), style="dim"))
    # A pipe or an agent reads whole lines: wrap only for a terminal, at its own width.
    console.print(Group(*blocks), soft_wrap=not console.is_terminal)
