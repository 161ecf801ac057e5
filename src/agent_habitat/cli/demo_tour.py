"""`habitat demo`: a short scripted tour in a temporary workspace — shell tabs, then the
ladder on a sample project: green; break it, see the rung that catches it; fix it, green
again (on the warm type-check daemon)."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import anyio
import anyio.to_thread
import psutil
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from ..events import InMemoryEventBus
from ..habitat import Habitat
from ..mcp_tools.wire import lean_dump
from ..shell import Shell
from ..shell.models import KillArgs, LastArgs, RunArgs, RunResult, WaitArgs
from ..verify import POLICIES, LadderRequest, LadderResult, run_ladder, stop_type_daemon
from ..workspace import Workspace
from .demo_sample import DEFECTS, break_sample, build_sample, fix_sample
from .ladder_view import LadderView, render_result

__all__ = ["ladder_tour", "run_demo", "shell_tour"]


def _typed(console: Console, argv: list[str], tool: str, args: dict[str, object]) -> None:
    """The step as a person types it, and the MCP tool call an agent makes for it."""
    console.print(f"[bold cyan]$ {shlex.join(['habitat', *argv])}[/]", highlight=False)
    console.print(f"[dim]  MCP: {tool} {json.dumps(args)}[/]", highlight=False, markup=True)


def _show(console: Console, result: RunResult) -> None:
    status = f"exit {result.exit_code}" if result.exit_code is not None else result.state
    console.print(f"[dim]  ({result.tab} #{result.index}, {status}, {result.duration_s:.3f}s)[/]")
    if result.output.strip():
        console.print(result.output.rstrip(), markup=False, highlight=False)


async def _run(console: Console, h: Shell, args: RunArgs) -> RunResult:
    argv = ["run", args.command]
    tool_args: dict[str, object] = {"command": args.command}
    if args.tab != "main":
        argv += ["--tab", args.tab]
        tool_args["tab"] = args.tab
    if args.background:
        argv.append("--background")
        tool_args["background"] = True
    _typed(console, argv, "shell_run", tool_args)
    result = await h.run(args)
    if not args.background:
        _show(console, result)
    return result


async def shell_tour(console: Console, project: Path) -> None:
    async with Habitat.open(Workspace.for_project(project), project=project) as opened:
        h = opened.shell
        console.rule("1. foreground commands in the default tab")
        first = await _run(console, h, RunArgs(command="echo hello from $0; uname -sr"))
        console.print("[dim]  the same call over MCP — what an agent sends and gets back:[/]")
        request = {"name": "shell_run", "arguments": {"command": first.command}}
        console.print(f"  → tools/call {json.dumps(request)}", markup=False, highlight=False)
        reply = lean_dump(first, RunArgs(command=first.command), {"cwd": h.default_cwd()})
        console.print(f"  ← structuredContent {json.dumps(reply)}", markup=False, highlight=False)

        console.rule("2. cd and export carry over to the next command, as in a terminal")
        await _run(console, h, RunArgs(command="mkdir -p build && cd build && export MODE=fast"))
        await _run(console, h, RunArgs(command='pwd; echo "MODE=$MODE"'))

        console.rule("3. a background run, followed live")
        started = await _run(
            console,
            h,
            RunArgs(
                command="for i in 1 2 3 4 5; do echo tick $i; sleep 0.2; done; echo server ready",
                tab="server",
                background=True,
            ),
        )
        console.print(f"  started in tab server with pid {started.pid}", highlight=False)
        _typed(
            console,
            ["wait", "server", "--until", "tick 3", "--timeout-seconds", "10"],
            "shell_wait",
            {"tab": "server", "until": "tick 3", "timeout_seconds": 10},
        )
        waited = await h.wait(WaitArgs(tab="server", until=r"tick 3", timeout_seconds=10))
        console.print(f"  {waited.reason}: {waited.match}", markup=False, highlight=False)
        _typed(
            console,
            ["wait", "server", "--until", "ready", "--timeout-seconds", "10"],
            "shell_wait",
            {"tab": "server", "until": "ready", "timeout_seconds": 10},
        )
        later = await h.wait(WaitArgs(tab="server", until="ready", timeout_seconds=10))
        console.print(f"  {later.reason}: {later.match}", markup=False, highlight=False)
        _typed(
            console,
            ["last", "server", "--since", str(waited.cursor)],
            "shell_last",
            {"tab": "server", "since": waited.cursor},
        )
        new = await h.last(LastArgs(tab="server", since=waited.cursor))
        console.print(new.output.rstrip(), markup=False, highlight=False)

        console.rule("4. kill a whole process tree (children and a double-forked grandchild)")
        tree = await _run(
            console,
            h,
            RunArgs(
                command="sleep 300 & (sleep 301 &) ; sleep 302",
                tab="tree",
                background=True,
            ),
        )
        await h.wait(WaitArgs(tab="tree", until="never", timeout_seconds=0.3))
        # This run's processes only: other habitats on the machine carry markers too.
        marker = psutil.Process(tree.pid).environ().get("HABITAT_RUN_ID") if tree.pid else None
        alive = [
            p.info["cmdline"]
            for p in psutil.process_iter(["cmdline", "environ"])
            if (p.info["environ"] or {}).get("HABITAT_RUN_ID") == marker
            and p.info["cmdline"]
            and p.info["cmdline"][0] == "sleep"
        ]
        running = ", ".join(sorted(" ".join(c) for c in alive))
        console.print(f"  tab tree (pid {tree.pid}) runs: {running}", highlight=False)
        _typed(console, ["kill", "tree"], "shell_kill", {"tab": "tree"})
        killed = await h.kill(KillArgs(tab="tree"))
        left = len(killed.remaining)
        console.print(f"  signalled {len(killed.pids)} processes; {left} left", highlight=False)

        console.rule("5. the scene: every tab at once")
        _typed(console, ["scene"], "shell_scene", {})
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
    console.print(f"[bold cyan]$ habitat verify[/]  [dim]# {title}[/]")
    console.print('[dim]  MCP: verify_run {"wait": true}[/]')
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
