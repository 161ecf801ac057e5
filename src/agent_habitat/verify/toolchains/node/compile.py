"""`compile.project` for Node: `tsc --noEmit` of each affected workspace that has a
`tsconfig.json`; `file(line,col): error TSxxxx` lines parsed into findings. In a habitat
server (the host, an MCP server) a warm checker answers (tsc_warm.py: the project's own
typescript kept loaded, a recheck costs what the change reaches); a one-shot verify, or a
check the warm one could not answer, runs tsc cold and incremental (its `.tsbuildinfo` in
the habitat's state folder). HEAD's errors come from the warm checker with HEAD's text of the
changed source files, else from the same tsc in HEAD's export with the project's
`node_modules` linked in (its own `.tsbuildinfo`); only errors not at HEAD make it red.
`build.affected`: the affected workspaces' `build` scripts, through the project's package
manager."""

from __future__ import annotations

import hashlib
import posixpath
import re
import shutil
import time
from pathlib import Path

import anyio.to_thread

from ....workspace import private_dirs
from ...baseline import BaseResult, fingerprint, summarize
from ...command import Outcome
from ...head import HeadTree
from ...models import Diagnostic, RungName, RungResult, RungState
from ...rungs.compare import cache_of, settle
from ...rungs.context import RungContext, from_outcome, nothing_to_do, skipped
from .comments import comments_only, refused
from .common import Tool, each, head_with_modules, merge, mine, node_rung
from .detect import NodeProject, Workspace
from .parsers import parse_tsc
from .race import warm_or_cold
from .tsc_warm import SCRIPT, head_overlay, slot, warm_tsc

__all__ = ["build_affected", "compile_project", "tsc_argv"]

RUNG: RungName = "compile.project"
BUILD: RungName = "build.affected"


def _no_change(ctx: RungContext) -> str | None:
    return None if mine(ctx) else "no touched JavaScript/TypeScript file or its configuration"


def _checked(project: NodeProject, touched: list[str]) -> list[Workspace]:
    return [ws for ws in project.affected(touched) if (ws.path / "tsconfig.json").is_file()]


def _has_references(workspace: Path) -> bool:
    try:
        text = (workspace / "tsconfig.json").read_text(encoding="utf-8")
    except OSError:
        return False
    return re.search(r'"references"\s*:', text) is not None


def tsc_argv(tsc: Path, state_dir: Path, workspace: Path, tag: str) -> list[str]:
    """tsc on the workspace's tsconfig, nothing written but its incremental state. A
    tsconfig with project references is checked project by project as `tsc -b` would, each
    reading its references' sources (tsc_warm.cjs once: `tsc -b` would write their
    outputs, and a plain `tsc -p` checks against outputs that may not be built)."""
    if _has_references(workspace):
        typescript = tsc.resolve().parent.parent  # node_modules/typescript/bin/tsc
        return ["node", str(SCRIPT), "--once", str(typescript), "tsconfig.json"]
    key = hashlib.sha256(f"{tag}\0{workspace}".encode()).hexdigest()[:16]
    info = state_dir / "node" / "tsc" / f"{key}.tsbuildinfo"
    private_dirs(info.parent)
    return [
        str(tsc),
        "--noEmit",
        "--pretty",
        "false",
        "-p",
        "tsconfig.json",
        "--incremental",
        "--tsBuildInfoFile",
        str(info),
    ]


def _findings(text: str, ws: Workspace, where: Path) -> list[Diagnostic]:
    """tsc's findings with paths from the project root (a file outside the workspace, as a
    referenced project's, is `../other/…` from it)."""

    def rel(file: str | None) -> str | None:
        if not ws.rel or not file or file.startswith("/"):
            return file
        return posixpath.normpath(f"{ws.rel}/{file}")

    return [d.model_copy(update={"file": rel(d.file)}) for d in parse_tsc(text, where)]


async def _head_errors(
    ctx: RungContext,
    head: HeadTree,
    project: NodeProject,
    ws: Workspace,
    tsc: Path,
    warm: bool,
) -> tuple[BaseResult, bool] | str:
    def prepare() -> tuple[str, BaseResult | None]:
        # HEAD's own files decide HEAD's errors; the installed dependencies are the
        # lockfile's (HEAD's tsconfig is in the export, whatever the change did to it).
        locks = [project.root / n for n in ("package-lock.json", "pnpm-lock.yaml", "yarn.lock")]
        key = fingerprint("tsc", head.head, str(tsc), ws.rel, *locks)
        return key, cache_of(ctx).get(key)

    key, hit = await anyio.to_thread.run_sync(prepare)
    if hit is not None:
        return hit, True

    async def warm_head(notes: list[str], may_start: bool) -> BaseResult | None:
        overlay = await anyio.to_thread.run_sync(head_overlay, ctx, head.read, ws)
        if overlay is None:
            return None
        outcome = await warm_tsc(ctx, project, ws, tsc, notes, overlay, may_start=may_start)
        if outcome is None:
            return None
        return BaseResult(
            findings=_findings(outcome.text, ws, ws.path), exit_code=outcome.exit_code
        )

    async def cold_head() -> BaseResult | str:
        export = await anyio.to_thread.run_sync(head_with_modules, head, project)
        where = export / ws.rel if ws.rel else export
        if not (where / "tsconfig.json").is_file():
            return BaseResult(findings=[])
        argv = tsc_argv(tsc, ctx.workspace.state_dir, where, "head")
        suffix = each(ws.rel, ".base.out")
        outcome = await ctx.run(RUNG, argv, suffix=suffix, cwd=where, reap_leftovers=False)
        if outcome.exit_code not in (0, 1, 2):
            return f"tsc failed on HEAD (exit {outcome.exit_code}): {outcome.tail.strip()[-200:]}"
        return BaseResult(findings=_findings(outcome.text, ws, where), exit_code=outcome.exit_code)

    # The warm checker when the work tree's check was warm, or when the warm-up's start of
    # it is under way (then the cold check of HEAD's export runs beside it).
    result, _ = await warm_or_cold(
        ctx, slot(ws), "tsc (HEAD)", warm_head, cold_head, [], may_start=warm
    )
    if isinstance(result, str):
        return result
    await anyio.to_thread.run_sync(cache_of(ctx).put, key, result)
    return result, False


async def _tsc(ctx: RungContext, project: NodeProject, ws: Workspace) -> RungResult:
    tool = Tool(project, ws, "tsc", "typescript")
    if tool.path is None:
        return tool.missing(ctx, RUNG, f"{ws.rel or 'the project'} has a tsconfig.json")
    tsc = tool.path
    notes = [tool.note()]

    async def warm(said: list[str], may_start: bool) -> Outcome | None:
        return await warm_tsc(ctx, project, ws, tsc, said, may_start=may_start)

    async def cold() -> Outcome:
        argv = tsc_argv(tsc, ctx.workspace.state_dir, ws.path, "work")
        return await ctx.run(RUNG, argv, suffix=each(ws.rel), cwd=ws.path, reap_leftovers=False)

    outcome, was_warm = await warm_or_cold(
        ctx, slot(ws), "tsc", warm, cold, notes, wait_for_start=True, waits=RUNG
    )
    diagnostics = _findings(outcome.text, ws, ws.path)
    state: RungState | None = None
    if outcome.exit_code in (1, 2) and diagnostics:
        state = "red"
    elif outcome.exit_code != 0:
        state = "error"
    result = from_outcome(
        ctx, RUNG, outcome, tool="tsc", state=state, diagnostics=diagnostics, notes=notes
    )
    if result.state == "error" and result.reason is None:
        result.reason = f"tsc failed (exit {outcome.exit_code}): {outcome.tail.strip()[-300:]}"
    return await settle(
        ctx, result, lambda head: _head_errors(ctx, head, project, ws, tsc, was_warm)
    )


@node_rung(RUNG, no_work=_no_change)
async def compile_project(ctx: RungContext, project: NodeProject) -> RungResult:
    started = time.monotonic()
    checked = await anyio.to_thread.run_sync(_checked, project, mine(ctx))
    if not checked:
        return nothing_to_do(ctx, RUNG, "node: no affected workspace has a tsconfig.json")
    said = await comments_only(ctx, project)
    if said is not None and said[0]:
        return nothing_to_do(ctx, RUNG, f"node: {said[1]}")
    results = [await _tsc(ctx, project, ws) for ws in checked]
    result = results[0] if len(results) == 1 else _once_each(merge(results))
    result.duration_s = round(time.monotonic() - started, 3)
    return refused(result, said)


def _once_each(result: RungResult) -> RungResult:
    """Each finding once: two checked workspaces report the same file's error when one's
    program holds the other's sources (a project reference, a relative import)."""
    seen: set[tuple[object, ...]] = set()
    kept: list[Diagnostic] = []
    for d in result.diagnostics:
        key = (d.file, d.line, d.col, d.code, d.message)
        if key not in seen:
            seen.add(key)
            kept.append(d)
    result.diagnostics = kept
    result.new_findings, result.preexisting_findings = summarize(kept)
    return result


def run_script(project: NodeProject, script: str) -> list[str] | None:
    """`<manager> run <script>` when the package manager is on PATH (npm comes with node)."""
    manager = shutil.which(project.manager)
    return None if manager is None else [manager, "run", script]


async def _build(ctx: RungContext, project: NodeProject, ws: Workspace) -> RungResult:
    argv = run_script(project, "build")
    if argv is None:
        return skipped(
            ctx,
            BUILD,
            f"node: the project uses {project.manager} (by its lockfile), which is not on PATH; "
            f"install it (`corepack enable {project.manager}`)",
            missing=project.manager,
        )
    outcome = await ctx.run(BUILD, argv, suffix=each(ws.rel), cwd=ws.path)
    result = from_outcome(
        ctx,
        BUILD,
        outcome,
        tool=f"{project.manager} run build",
        diagnostics=parse_tsc(outcome.text, ws.path),
        notes=[f"node: the build script of {ws.name} ({ws.scripts['build'][:120]})"],
    )
    return result


@node_rung(BUILD, no_work=_no_change)
async def build_affected(ctx: RungContext, project: NodeProject) -> RungResult:
    started = time.monotonic()
    built = [ws for ws in project.affected(mine(ctx)) if "build" in ws.scripts]
    if not built:
        return nothing_to_do(ctx, BUILD, "node: no affected workspace has a build script")
    results = [await _build(ctx, project, ws) for ws in built]
    result = results[0] if len(results) == 1 else merge(results)
    result.duration_s = round(time.monotonic() - started, 3)
    return result
