"""Text renderings of tool results.

`render` is the full text (state and exit code first, then the capped output, then where
the rest is): the `status` prompt and the CLI-like views use it. `brief` is the text block
of a tool result that also carries structured content. Claude Code, VS Code and Codex hand
the model the structured content *instead of* the text block when both are present, Cursor
by every report too (docs/result-shape.md): the model reads the structured content, so the
text block is a few words for the person looking at the call — the outcome (`exited 0`,
`running pid 42`), and where the rest of the output is when some was left out — and never
the body again.
"""

from __future__ import annotations

from functools import singledispatch

from pydantic import BaseModel

from agent_habitat.files import FileEditResult, FileWriteResult, render_file_change
from agent_habitat.project import ProjectOpenResult
from agent_habitat.project_scene import ProjectSceneResult, render_project_scene
from agent_habitat.shell import models as m
from agent_habitat.trust import TrustResult
from agent_habitat.verify.runner.report import (
    VerifyCancelResult,
    VerifyRunResult,
    VerifyStatusResult,
)
from agent_habitat.verify.runner.text import (
    render_verify_cancel,
    render_verify_run,
    render_verify_status,
)

from .wire import failed_verify

__all__ = ["brief", "render"]


def _outcome(state: m.RunState | None, exit_code: int | None, signal: int | None = None) -> str:
    if state is None:
        return "state=none"
    text = f"state={state}"
    if exit_code is not None:
        text += f" exit_code={exit_code}"
    if signal is not None:
        text += f" signal={signal}"
    return text


def _body(output: str) -> str:
    return output if output.endswith("\n") or not output else output + "\n"


@singledispatch
def render(result: BaseModel) -> str:
    """Text for a result; models without a renderer fall back to their JSON."""
    return result.model_dump_json(indent=1)


@render.register
def _run(result: m.RunResult) -> str:
    head = _outcome(result.state, result.exit_code, result.signal)
    head += f" tab={result.tab} #{result.index} {result.duration_s:.2f}s"
    if result.state == "running":
        head += f" pid={result.pid} (still running: wait or last on tab {result.tab})"
    text = head + "\n" + _body(result.output)
    if result.omitted_bytes:
        omitted = f"{result.omitted_bytes} of {result.output_bytes} bytes"
        text += f"[{omitted} omitted; spool {result.spool}]\n"
    return text + _errors(result) + _left(result.left_running, result.tab)


def _errors(result: m.RunResult | m.LastResult) -> str:
    if not result.error_lines:
        return ""
    more = f" (and {result.error_lines_more} more: grep)" if result.error_lines_more else ""
    lines = "".join(f"  {line}\n" for line in result.error_lines)
    return f"lines that look like errors in what was left out{more}:\n{lines}"


def _left(procs: list[m.LeftProcess], tab: str) -> str:
    if not procs:
        return ""
    listed = "; ".join(f"{p.pid} {p.command}" for p in procs)
    return f"left running: {listed} (kill or close tab {tab} stops them)\n"


@render.register
def _last(result: m.LastResult) -> str:
    head = f"{_outcome(result.state, result.exit_code)} tab={result.tab} #{result.index}"
    head += f" cursor={result.cursor}" + (" (running)" if result.running else "")
    text = f"{head}\n$ {result.command}\n" + _body(result.output)
    if result.omitted_bytes:
        text += f"[{result.omitted_bytes} bytes omitted; spool {result.spool}]\n"
    return text + _errors(result)


@render.register
def _wait(result: m.WaitResult) -> str:
    head = f"reason={result.reason} {_outcome(result.state, result.exit_code)} tab={result.tab}"
    if result.index is not None:
        head += f" #{result.index}"
    if result.match is not None:
        head += f" match={result.match!r}"
    return f"{head} cursor={result.cursor}\n" + _body(result.output)


@render.register
def _scene(result: m.SceneResult) -> str:
    caps = result.caps
    lines = [
        f"{len(result.tabs)}/{caps.max_tabs} tabs (output cap {caps.output_cap_bytes} B, "
        f"history {caps.history_rows} rows)"
    ]
    for tab in result.tabs:
        line = f"- {tab.name}: {tab.state} {tab.shell} cwd={tab.cwd}"
        if tab.pid is not None:
            line += f" pid={tab.pid}"
        if tab.last_run is not None:
            run = tab.last_run
            line += f" | last #{run.index} {_outcome(run.state, run.exit_code)} "
            line += f"{run.duration_s:.2f}s $ {run.command}"
        lines.append(line)
        if tab.left_running:
            lines.append("    " + _left(tab.left_running, tab.name).rstrip("\n"))
        if tab.preview:
            lines.extend("    " + row for row in tab.preview.rstrip("\n").splitlines())
    return "\n".join(lines) + "\n"


@render.register
def _history(result: m.HistoryResult) -> str:
    lines = [f"tab={result.tab} {len(result.rows)} runs (oldest first)"]
    for row in result.rows:
        lines.append(
            f"#{row.index} {_outcome(row.state, row.exit_code)} {row.duration_s:.2f}s "
            f"{row.output_bytes}B{' bg' if row.background else ''} $ {row.command}"
        )
    return "\n".join(lines) + "\n"


@render.register
def _which(result: m.WhichResult) -> str:
    pid = f" pid={result.pid}" if result.pid is not None else ""
    return (
        f"tab={result.tab} state={result.state}{pid} shell={result.shell} "
        f"{result.executable} ({result.version}) cwd={result.cwd}\n"
    )


@render.register
def _kill(result: m.KillResult) -> str:
    if not result.killed:
        return f"killed=false tab={result.tab}: nothing was running\n"
    text = f"killed=true tab={result.tab} #{result.index} signal={result.signal} pids={result.pids}"
    if result.remaining:
        text += f" STILL ALIVE: {result.remaining}"
    if result.untracked:
        text += f"\nnot looked for: {result.untracked}"
    return text + "\n"


@render.register
def _close(result: m.CloseResult) -> str:
    return (
        f"closed tab={result.tab} killed={str(result.killed).lower()} "
        f"open_tabs={','.join(result.open_tabs) or '-'}\n"
    )


@render.register
def _input(result: m.InputResult) -> str:
    eof = " and closed stdin" if result.eof else ""
    return f"wrote {result.bytes_written} bytes{eof} to tab={result.tab} #{result.index}\n"


@singledispatch
def brief(result: BaseModel) -> str:
    """The text block beside the structured content; results without a brief: `render`."""
    return render(result)


def _more(omitted_bytes: int, output_bytes: int, how: str) -> str:
    if not omitted_bytes:
        return ""
    return f"\n[{omitted_bytes} of {output_bytes} bytes left out; {how}]"


def _said(state: m.RunState | None, exit_code: int | None, signal: int | None = None) -> str:
    """The outcome in a few words: `exited 0`, `running`, `killed signal 9`."""
    text: str = state or "no run"
    if exit_code is not None:
        text += f" {exit_code}"
    return text + (f" signal {signal}" if signal is not None else "")


@brief.register
def _run_brief(result: m.RunResult) -> str:
    text = _said(result.state, result.exit_code, result.signal)
    if result.state == "running":
        text += f" pid {result.pid}"
    how = f"shell_last tab={result.tab} index={result.index} grep/since"
    return text + _more(result.omitted_bytes, result.output_bytes, how) + "\n"


@brief.register
def _last_brief(result: m.LastResult) -> str:
    text = _said(result.state, result.exit_code, result.signal)
    return text + _more(result.omitted_bytes, result.output_bytes, "grep, or since") + "\n"


_WAIT_REASONS = {
    "exited": "the run ended",
    "timeout": "timed out waiting",
    "not_running": "nothing to wait for",
}


@brief.register
def _wait_brief(result: m.WaitResult) -> str:
    # The wait's reason and the run's state are two facts: `matched: running` read as if
    # the regex had matched the word "running".
    if result.reason == "matched":
        why = "matched" if result.match is None else f"matched {result.match!r}"
    else:
        why = _WAIT_REASONS.get(result.reason, result.reason)
    if result.state == "running":
        return f"{why}; the run goes on\n"
    return f"{why}; run {_said(result.state, result.exit_code, result.signal)}\n"


@brief.register
def _kill_brief(result: m.KillResult) -> str:
    if not result.killed:
        return "nothing was running\n"
    text = "killed" if result.signal == "SIGTERM" else f"killed {result.signal}"
    return text + (f" STILL ALIVE: {result.remaining}" if result.remaining else "") + "\n"


@brief.register
def _scene_brief(result: m.SceneResult) -> str:
    tabs = ", ".join(f"{t.name} {t.state}" for t in result.tabs) or "no tabs"
    return f"{len(result.tabs)}/{result.caps.max_tabs} tabs: {tabs}\n"


@render.register
def _project_open(result: ProjectOpenResult) -> str:
    git = f" (git work tree {result.git_root})" if result.git_root else " (not in a git work tree)"
    before = f"; before: {result.previous}" if result.previous else ""
    return f"project={result.root}{git}{before}\n"


@render.register
def _trust(result: TrustResult) -> str:
    return result.summary + "\n"


render.register(FileWriteResult, render_file_change)
render.register(FileEditResult, render_file_change)
render.register(ProjectSceneResult, render_project_scene)
render.register(VerifyRunResult, render_verify_run)
render.register(VerifyStatusResult, render_verify_status)
render.register(VerifyCancelResult, render_verify_cancel)


@brief.register(VerifyRunResult)
@brief.register(VerifyStatusResult)
@brief.register(VerifyCancelResult)
def _verify_brief(result: BaseModel) -> str:
    # The verdict line, and what is not green in one line; the findings are structured.
    if isinstance(result, VerifyRunResult) and result.green and result.result is not None:
        return "green\n"  # what was checked is the structured summary (wire rule 6)
    if isinstance(result, VerifyRunResult) and result.result and result.result.covers:
        if result.result.state == "green" and not result.result.stale:
            return f"green for {', '.join(result.result.covers)} only: not the ladder\n"
    if isinstance(result, VerifyRunResult) and result.result and failed_verify(result):
        # The failure is the structured content (wire rule 7): which rungs, in a few words.
        # A rung the first red stopped (`stopped: <rung> is red`) is in the structured
        # content; the few words name what failed.
        failing = [
            r
            for r in result.result.rungs
            if r.state not in ("green", "skipped") and not (r.reason or "").startswith("stopped: ")
        ]
        said = ", ".join(f"{r.rung} {r.state}" for r in failing) or result.result.reason
        return f"{result.state}: {said}\n" if said else f"{result.state}\n"
    lines = render(result).splitlines()
    green = getattr(result, "green", False)
    return "\n".join(lines[:1] if green else lines[:2]) + "\n"
