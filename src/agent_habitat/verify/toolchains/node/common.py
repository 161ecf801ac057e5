"""What every Node rung shares: the preamble (no work, a configured command, no
`node_modules`), the tool's own binary and version for the notes, and HEAD's export with
the project's `node_modules` linked in, where the baseline checks run."""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

import anyio.to_thread

from ...head import HeadTree
from ...models import RungName, RungResult
from ...rungs.context import RungContext, skipped
from ...rungs.preamble import before_the_tool
from .detect import NodeProject, Workspace, is_node_project, load_project, owns

__all__ = [
    "NodeRung",
    "Tool",
    "each",
    "head_with_modules",
    "merge",
    "mine",
    "node_rung",
    "tool_version",
]

NOT_NODE = "not a Node project (no package.json) and no [tool.habitat.ladder] command"
Rung = Callable[[RungContext], Awaitable[RungResult]]
NodeRung = Callable[[RungContext, NodeProject], Awaitable[RungResult]]


def mine(ctx: RungContext) -> list[str]:
    """The touched paths that are the Node toolchain's."""
    return [p for p in ctx.touched if owns(p)]


def _has_modules(project: NodeProject) -> bool:
    return any((ws.path / "node_modules").is_dir() for ws in project.workspaces)


def node_rung(
    rung: RungName, *, no_work: Callable[[RungContext], str | None] | None = None
) -> Callable[[NodeRung], Rung]:
    """The preamble of every Node rung: nothing to do → skipped (`no_work` says why); a
    command configured in `[tool.habitat.ladder]` → it runs instead; no `package.json` →
    skipped; no `node_modules` → skipped with the install command (the ladder is then
    `incomplete`, never green); else the rung's body with the project's layout."""

    def wrap(body: NodeRung) -> Rung:
        @functools.wraps(body)
        async def run(ctx: RungContext) -> RungResult:
            answered = await before_the_tool(ctx, rung, no_work)
            if answered is not None:
                return answered
            if not is_node_project(ctx.root):
                return skipped(ctx, rung, NOT_NODE)
            project = await anyio.to_thread.run_sync(load_project, ctx.root)
            if not _has_modules(project):
                hint = project.install_hint()
                return skipped(
                    ctx,
                    rung,
                    f"node: node_modules is missing, so no tool of the project can run; {hint}",
                    missing=hint.removeprefix("run "),
                )
            return await body(ctx, project)

        return run

    return wrap


def each(where: str, suffix: str = ".out") -> str:
    """A spool suffix of its own for a run in `where` (a workspace's or folder's path from
    the root): a rung that runs once per workspace must not read the run before it (a run
    appends to its spool)."""
    if not where or where == ".":
        return suffix
    return "." + hashlib.sha256(where.encode()).hexdigest()[:8] + suffix


def tool_version(bin_path: Path, package: str) -> str:
    """The version of the package a `node_modules/.bin` entry belongs to ('' if unknown)."""
    modules = bin_path.parent.parent
    try:
        data = json.loads((modules / package / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(data.get("version", "")) if isinstance(data, dict) else ""


class Tool:
    """A tool of the project, found in its `node_modules/.bin`."""

    def __init__(self, project: NodeProject, workspace: Workspace, name: str, package: str):
        self.name = name
        self.package = package
        self.path = project.bin(workspace, name)
        self.project = project

    def missing(self, ctx: RungContext, rung: RungName, why: str) -> RungResult:
        hint = f"add {self.package} to the devDependencies and {self.project.install_hint()}"
        return skipped(
            ctx,
            rung,
            f"node: {why}, but node_modules/.bin/{self.name} is not installed; {hint}",
            missing=self.package,
        )

    def note(self) -> str:
        assert self.path is not None
        version = tool_version(self.path, self.package)
        at = os.path.relpath(self.path, self.project.root)
        return f"node: {self.name}{' ' + version if version else ''} from {at}"


def _link_modules(export: Path, root: Path, folders: Iterable[str]) -> None:
    for rel in folders:
        source = (root / rel / "node_modules") if rel else root / "node_modules"
        target = (export / rel / "node_modules") if rel else export / "node_modules"
        if not source.is_dir() or target.is_symlink() or target.exists():
            continue
        if not target.parent.is_dir():
            continue  # the workspace did not exist at HEAD
        target.symlink_to(source.resolve(), target_is_directory=True)


def head_with_modules(head: HeadTree, project: NodeProject) -> Path:
    """HEAD's export with each workspace's `node_modules` linked from the working tree, so
    tsc, biome or a build resolve HEAD's code against the same dependencies (blocking)."""
    export = head.export()
    _link_modules(export, project.root, [ws.rel for ws in project.workspaces])
    return export


_WORST = ("died", "error", "red", "cancelled", "green", "skipped")


def merge(results: list[RungResult]) -> RungResult:
    """One rung's results over several workspaces as one: the worst state wins (died, error,
    red over green over skipped), findings and notes together, the reason of the worst."""
    first = min(results, key=lambda r: _WORST.index(r.state))
    merged = first.model_copy(deep=True)
    merged.diagnostics = [d for r in results for d in r.diagnostics]
    merged.diagnostics.sort(key=lambda d: d.preexisting)
    merged.notes = [n for r in results for n in r.notes]
    merged.new_findings = sum(r.new_findings for r in results)
    merged.preexisting_findings = sum(r.preexisting_findings for r in results)
    merged.duration_s = round(sum(r.duration_s for r in results), 3)
    merged.tool = "+".join(dict.fromkeys(r.tool for r in results if r.tool)) or None
    return merged
