"""The ladder part of `habitat demo`: a sample project, green; break it, see the rung that
catches it; fix it, green again (on the warm type-check daemon)."""

from __future__ import annotations

from pathlib import Path

import anyio.to_thread
from rich.console import Console

from ..events import InMemoryEventBus
from .display import LadderView, render_result
from .ladder import run_ladder, stop_type_daemon
from .models import POLICIES, LadderRequest, LadderResult
from .sample import DEFECTS, break_sample, build_sample, fix_sample

__all__ = ["ladder_tour"]


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
