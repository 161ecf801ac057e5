"""`habitat demo`: a short scripted tour in a temporary workspace — shell tabs, then the
ladder on a sample project: green; break it, see the rung that catches it; fix it, green
again (on the warm type-check daemon)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import anyio.to_thread
import psutil
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from ..events import InMemoryEventBus
from ..habitat import Habitat
from ..shell.models import KillArgs, LastArgs, RunArgs, RunResult, WaitArgs
from ..verify import POLICIES, LadderRequest, LadderResult, run_ladder, stop_type_daemon
from ..workspace import Workspace
from .demo_sample import DEFECTS, break_sample, build_sample, fix_sample
from .ladder_view import LadderView, render_result

__all__ = ["ladder_tour", "run_demo", "shell_tour"]


def _show(console: Console, result: RunResult) -> None:
    status = f"exit {result.exit_code}" if result.exit_code is not None else result.state
    console.print(
        f"[bold cyan]$ {result.command}[/]  [dim]({result.tab} #{result.index}, "
        f"{status}, {result.duration_s:.3f}s)[/]"
    )
    if result.output.strip():
        console.print(result.output.rstrip(), markup=False, highlight=False)


async def shell_tour(console: Console, project: Path) -> None:
    async with Habitat.open(Workspace.for_project(project), project=project) as opened:
        h = opened.shell
        console.rule("1. foreground commands in the default tab")
        _show(console, await h.run(RunArgs(command="echo hello from $0; uname -sr")))

        console.rule("2. cd and export carry over to the next command, as in a terminal")
        _show(
            console, await h.run(RunArgs(command="mkdir -p build && cd build && export MODE=fast"))
        )
        _show(console, await h.run(RunArgs(command='pwd; echo "MODE=$MODE"')))

        console.rule("3. a background run, followed live")
        started = await h.run(
            RunArgs(
                command="for i in 1 2 3 4 5; do echo tick $i; sleep 0.2; done; echo server ready",
                tab="server",
                background=True,
            )
        )
        console.print(
            f"started in tab [bold]server[/] with pid {started.pid}; waiting for 'tick 3'…"
        )
        waited = await h.wait(WaitArgs(tab="server", until=r"tick 3", timeout_seconds=10))
        console.print(f"wait → {waited.reason} {waited.match!r}")
        later = await h.wait(WaitArgs(tab="server", until="ready", timeout_seconds=10))
        new = await h.last(LastArgs(tab="server", since=waited.cursor))
        console.print(f"wait → {later.reason}; output since the cursor: {new.output.split()!r}")

        console.rule("4. kill a whole process tree (children and a double-forked grandchild)")
        tree = await h.run(
            RunArgs(
                command="sleep 300 & (sleep 301 &) ; sleep 302",
                tab="tree",
                background=True,
            )
        )
        await h.wait(WaitArgs(tab="tree", until="never", timeout_seconds=0.3))
        alive = [
            p.info["cmdline"]
            for p in psutil.process_iter(["cmdline", "environ"])
            if (p.info["environ"] or {}).get("HABITAT_RUN_ID", "").startswith("run-")
            and p.info["cmdline"]
            and p.info["cmdline"][0] == "sleep"
        ]
        console.print(f"tab tree (pid {tree.pid}) runs: {sorted(' '.join(c) for c in alive)}")
        killed = await h.kill(KillArgs(tab="tree"))
        console.print(
            f"kill → signalled {len(killed.pids)} processes, remaining {killed.remaining}"
        )

        console.rule("5. the scene: every tab at once")
        scene = await h.scene()
        table = Table("tab", "state", "cwd", "last run")
        for tab in scene.tabs:
            last = tab.last_run
            table.add_row(
                tab.name,
                tab.state,
                tab.cwd,
                f"#{last.index} {last.command[:36]!r} → {last.state}" if last else "—",
            )
        console.print(table)


async def _climb(console: Console, root: Path, title: str) -> LadderResult:
    console.print(f"[bold]habitat verify[/]  [dim]# {title}[/]")
    bus = InMemoryEventBus(str(root))
    with LadderView(console, POLICIES["standard"], bus):
        result = await run_ladder(root, LadderRequest(policy="standard"), bus=bus)
    render_result(console, result)
    return result


async def ladder_tour(console: Console, workdir: Path) -> None:
    """Build a sample project under `workdir`, break it, show the red rung, fix it, show green."""
    root = workdir / "calc"
    await anyio.to_thread.run_sync(lambda: build_sample(root))
    console.print(f"sample project: {root} (package, tests, pyproject, git)")
    try:
        (root / "src/calc/text.py").write_text(
            (root / "src/calc/text.py").read_text(encoding="utf-8") + "\n\nQUIET = '.'\n",
            encoding="utf-8",
        )
        first = await _climb(console, root, "a harmless edit to calc/text.py")
        rel, _, what = DEFECTS["type"]
        await anyio.to_thread.run_sync(break_sample, root, "type")
        console.print(f"\n[bold red]break it:[/] {rel} now has {what}")
        broken = await _climb(console, root, "the same ladder, on the broken code")
        red = next((r for r in broken.rungs if r.state == "red"), None)
        if red is not None:
            console.print(f"→ [bold red]{red.rung}[/] is red; the climb stopped there")
        await anyio.to_thread.run_sync(fix_sample, root, "type")
        console.print(f"\n[bold green]fix it:[/] {rel} restored")
        fixed = await _climb(console, root, "again, on a warm dmypy daemon")
        console.print(
            f"snapshots: {first.snapshot} → {broken.snapshot} → {fixed.snapshot} "
            "(a verdict belongs to the snapshot it ran on)"
        )
    finally:
        await stop_type_daemon(root)


async def run_demo(tmp: Path, console: Console | None = None) -> None:
    """The whole tour, with state and project inside `tmp`."""
    console = console or Console()
    os.environ["HABITAT_HOME"] = str(Path(tmp, "state"))
    project = Path(tmp, "project")
    await anyio.Path(project).mkdir(parents=True, exist_ok=True)
    console.print(
        Panel.fit(
            "agent-habitat demo — shell tabs a coding agent and a person share\n"
            f"temporary workspace: {project}",
            style="bold",
        )
    )
    await shell_tour(console, project)
    console.rule("6. the verification ladder")
    await ladder_tour(console, Path(tmp, "ladder"))
