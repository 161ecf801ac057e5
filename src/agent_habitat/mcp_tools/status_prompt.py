"""The `status` prompt's text: the tabs, the verify verdict and the time, each said once.

A person's `/status` puts this in the conversation, so it is read by the model whole: one
line per tab (its last output line, not its preview), the verdict line and what is red
(file:line, the message, the assertion line), then where the time went, within
`STATUS_TEXT_BYTES`. The JSON behind it is not copied in: the prompt links
`habitat://scene` and `habitat://verify/epoch`, which a client reads when it wants them.
"""

from __future__ import annotations

from agent_habitat.shell import models as m
from agent_habitat.verify.runner.report import RungReport, VerifyStatusResult
from agent_habitat.verify.runner.text import epoch_summary

__all__ = ["STATUS_TEXT_BYTES", "status_text"]

STATUS_TEXT_BYTES = 1500
"""The text's budget; with the links and the envelope the prompt stays within 2 KiB."""
_COMMAND_CHARS = 80
_LINE_CHARS = 160
_FINDINGS_SHOWN = 3


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tab_lines(tab: m.TabScene) -> list[str]:
    line = f"- {tab.name}: {tab.state}" + (f" pid {tab.pid}" if tab.pid is not None else "")
    run = tab.last_run
    if run is not None:
        said = run.state + (f" {run.exit_code}" if run.exit_code is not None else "")
        line += f"; last #{run.index} {said} {run.duration_s:.1f}s $ {run.command}"
    lines = [_cut(line, _COMMAND_CHARS + 60)]
    if tab.left_running:
        lines.append(f"  still running from it: {len(tab.left_running)} process(es)")
    last = next((row for row in reversed(tab.preview.splitlines()) if row.strip()), "")
    if last:
        lines.append("  | " + _cut(last.strip(), _LINE_CHARS))
    return lines


def _failing(rung: RungReport) -> list[str]:
    new = [d for d in rung.diagnostics if not d.preexisting and d.severity == "error"]
    # With findings, the reason is the first of them again ("1 test failure(s), first …").
    reason = f": {rung.reason}" if rung.reason and not new else ""
    lines = [_cut(f"  {rung.rung} {rung.state}{reason}", 240)]
    for diag in new[:_FINDINGS_SHOWN]:
        where = ":".join(str(x) for x in (diag.file, diag.line) if x is not None)
        lines.append(_cut(f"    {where} {diag.code or ''} {diag.message}".rstrip(), _LINE_CHARS))
        if diag.text:
            lines.append(_cut(f"      > {diag.text}", _LINE_CHARS))
    if len(new) > _FINDINGS_SHOWN:
        lines.append(f"    … {len(new) - _FINDINGS_SHOWN} more (verify_status)")
    return lines


def _verify_lines(status: VerifyStatusResult) -> list[str]:
    epoch = status.epoch
    failing = [
        rung
        for rung in (epoch.rungs if epoch is not None and not epoch.stale else [])
        if rung.state not in ("green", "skipped", "waiting", "running")
    ]
    if epoch is not None and failing:  # the verdict, then what failed, each once
        lines = [f"Verify: {epoch.state} on {epoch.snapshot}: epoch {epoch.epoch} ({epoch.task})"]
        for rung in failing:
            lines += _failing(rung)
    else:
        lines = [_cut("Verify: " + (epoch_summary(epoch) if epoch else status.summary), 300)]
    if status.running and (epoch is None or status.running != epoch.task):
        lines.append(f"running now: {status.running}")
    return lines


def status_text(
    project: str,
    scene: m.SceneResult,
    status: VerifyStatusResult | None,
    time: str,
    ask: str,
) -> str:
    """The prompt's text within `STATUS_TEXT_BYTES`; what does not fit is named, not cut
    mid-line (the ask always stays)."""
    open_tabs = [tab for tab in scene.tabs if tab.state != "closed"]
    body = [project, f"Tabs: {len(open_tabs)} of {scene.caps.max_tabs} open"]
    for tab in open_tabs:
        body += _tab_lines(tab)
    if status is not None:
        body += _verify_lines(status)
    body.append(time)
    room = STATUS_TEXT_BYTES - len(ask.encode()) - 60
    kept: list[str] = []
    for index, line in enumerate(body):
        size = len(line.encode()) + 1
        if size > room:
            kept.append(f"… {len(body) - index} more lines: shell_scene, verify_status")
            break
        kept.append(line)
        room -= size
    return "\n".join([*kept, "", ask])
