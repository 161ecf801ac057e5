"""How the CLI shows each shell verb's result, and the exit code it gives: standard library
only, on the result as JSON data.

Both paths hand the same data here: the embedded path the result model dumped
(`model_dump(mode="json")`), the host path the host's JSON answer (`cli.host_verbs`). So a
command prints the same text, the same `--json` and exits with the same code whether or not
a host runs, by construction. Output goes to stdout; the status line about it (how it ended,
how long it took) to stderr, dimmed on a terminal, so `habitat run … > out.txt` holds only
the command's output.
"""

from __future__ import annotations

import sys

from .styles import dim
from .table import Column, render_table, terminal_width

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any

    Data = Mapping[str, Any]

__all__ = ["VIEWS", "ShellView", "emit_json_data", "run_exit_code"]


def _zero(result: Data) -> int:
    return 0


class ShellView:
    """How the CLI shows one verb's result: `show(result, streamed, root)`, the exit code,
    and whether the run's output is copied to the terminal while it goes on (foreground
    runs)."""

    __slots__ = ("exit_code", "show", "streams")

    def __init__(
        self,
        show: Callable[[Data, bool, Path | str | None], None],
        exit_code: Callable[[Data], int] = _zero,
        *,
        streams: bool = False,
    ) -> None:
        self.show = show
        self.exit_code = exit_code
        self.streams = streams


def emit_json_data(data: Any) -> None:
    """`--json`: the result as indented JSON (the same text on both paths)."""
    import json  # here: a plain answer does without it (`re` and `enum` come with it)

    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def run_exit_code(result: Data) -> int:
    """A run's exit code as a shell gives it: its own, 124 on timeout, 128+N for signal N."""
    state = result.get("state")
    if state == "running":
        return 0
    if state == "timed_out":
        return 124
    if state == "cancelled":
        return 130
    code = result.get("exit_code")
    if code is not None:
        return int(code)
    return 128 + int(result.get("signal") or 9)


def _wait_exit_code(result: Data) -> int:
    """A match: 0; the run's end: its exit code, as `habitat run` gives it; else 1."""
    if result.get("reason") == "matched":
        return 0
    if result.get("reason") == "exited":
        return run_exit_code(result)
    return 1


def _end_words(state: str | None, exit_code: int | None, sig: int | None) -> str:
    """How a run ended, in words: `exit 4`, `killed by SIGINT`, `lost (no exit code)`."""
    if exit_code is not None:
        return f"exit {exit_code}"
    if sig:
        try:
            import signal  # here: its enums cost `enum` on every call otherwise

            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"{state or 'ended'} by {name}"
    return f"{state or 'no run'} (no exit code)"


def _show_run(r: Data, streamed: bool, root: Path | str | None) -> None:
    if not streamed and r["state"] != "running":
        sys.stdout.write(r["output"])
        sys.stdout.flush()
    tab = r["tab"]
    if r["state"] == "running":
        status = f"#{r['index']} running in tab {tab} (pid {r['pid']}); `habitat last --tab {tab}`"
    else:
        status = _end_words(r["state"], r.get("exit_code"), r.get("signal"))
        status += f" · {r['duration_s']:.2f}s · tab {tab} #{r['index']}"
    dim(status, sys.stderr)
    if r.get("omitted_bytes") and not streamed:
        sys.stderr.write(f"[{r['omitted_bytes']} bytes omitted; full output: {r['spool']}]\n")


def _show_scene(scene: Data, streamed: bool, root: Path | str | None) -> None:
    from .host_scene import scene_of
    from .scene_view import print_scene

    print_scene(scene_of(scene), root)


_HISTORY = (
    Column("#"),
    Column("command", shrink="end"),
    Column("state"),
    Column("exit"),
    Column("duration"),
    Column("bytes"),
    Column("cwd", shrink="start"),
)


def _show_history(result: Data, streamed: bool, root: Path | str | None) -> None:
    from .scene_view import shown_cwd
    from .styles import styled

    rows = [
        (
            str(row["index"]),
            row["command"],
            row["state"],
            row["state"] if row.get("exit_code") is None else str(row["exit_code"]),
            f"{row['duration_s']:.2f}s",
            str(row["output_bytes"]),
            shown_cwd(row["cwd"], root),
        )
        for row in result["rows"]
    ]
    width = terminal_width()
    sys.stdout.write(render_table(_HISTORY, rows, width=width, styled=styled(sys.stdout)))


def _show_last(result: Data, streamed: bool, root: Path | str | None) -> None:
    sys.stdout.write(result["output"])
    sys.stdout.flush()
    if result.get("running"):
        state = "running"
    else:
        code = result.get("exit_code")
        state = _end_words(result.get("state"), code, result.get("signal"))
        state += "" if code is None else f" ({result['state']})"
    dim(
        f"#{result['index']} `{result['command']}` · {state} · {result['output_bytes']} B · "
        f"cursor {result['cursor']}",
        sys.stderr,
    )


def _show_which(r: Data, streamed: bool, root: Path | str | None) -> None:
    pid = f" · pid {r['pid']}" if r.get("pid") else ""
    sys.stdout.write(
        f"{r['tab']}: {r['shell']} ({r['executable']}, {r['version']})\n"
        f"cwd {r['cwd']} · {r['state']}{pid}\n"
    )


def _show_kill(r: Data, streamed: bool, root: Path | str | None) -> None:
    if not r.get("killed"):
        sys.stdout.write(f"tab {r['tab']}: nothing running\n")
        return
    name = str(r["signal"]).removeprefix("SIG")
    sys.stdout.write(
        f"tab {r['tab']} #{r['index']}: SIG{name} to {len(r['pids'])} process(es); "
        f"{len(r.get('remaining') or [])} left\n"
    )


def _show_close(r: Data, streamed: bool, root: Path | str | None) -> None:
    sys.stdout.write(f"closed {r['tab']}" + (" (killed its command)" if r.get("killed") else ""))
    sys.stdout.write("\n")


def _show_wait(r: Data, streamed: bool, root: Path | str | None) -> None:
    if r.get("index") is None:
        sys.stdout.write(f"{r['reason']} · tab {r['tab']} has no runs yet\n")
        return
    detail = f" {r['match']!r}" if r.get("match") else ""
    end = (
        "still running"
        if r.get("state") == "running"
        else _end_words(r.get("state"), r.get("exit_code"), r.get("signal"))
    )
    sys.stdout.write(f"{r['reason']}{detail} · tab {r['tab']} #{r['index']} · {end}\n")


def _show_input(r: Data, streamed: bool, root: Path | str | None) -> None:
    sys.stdout.write(f"wrote {r['bytes_written']} B to #{r['index']}\n")


def _kill_exit_code(r: Data) -> int:
    # Nothing to kill is a refusal: non-zero, as every refusal is.
    return 0 if r.get("killed") and not r.get("remaining") else 1


def _show_project(scene: Data, streamed: bool, root: Path | str | None) -> None:
    from ..project_scene_text import project_scene_text

    sys.stdout.write(project_scene_text(scene))


VIEWS: dict[str, ShellView] = {
    "run": ShellView(_show_run, run_exit_code, streams=True),
    "rerun": ShellView(_show_run, run_exit_code, streams=True),
    "scene": ShellView(_show_scene),
    "history": ShellView(_show_history),
    "last": ShellView(_show_last),
    "which": ShellView(_show_which),
    "kill": ShellView(_show_kill, _kill_exit_code),
    "close": ShellView(_show_close),
    "wait": ShellView(_show_wait, _wait_exit_code),
    "input": ShellView(_show_input),
    "project": ShellView(_show_project),
}
"""The shell verbs' views (and `habitat project`'s), by CLI command name; a verb without one
(`habitat trust`) prints its result's JSON."""
