"""`build.affected`: reinstall the project when a dependency manifest changed, then import
every affected module in a fresh interpreter (import-time errors, broken cycles)."""

from __future__ import annotations

import json
import os
import shlex
import time

import anyio

from ..config import expand_command
from ..environments import ProjectEnv
from ..layout import is_manifest
from ..models import Diagnostic, RungName, RungResult, RungState
from ..parsers import relative
from .context import RungContext, from_outcome, nothing_to_do, skipped
from .preamble import python_rung
from .regenerate import regenerate

__all__ = ["build_affected"]

RUNG: RungName = "build.affected"

# Runs in the project's interpreter: imports each module, writes what failed as JSON.
_SMOKE = """
import importlib, json, os, sys, traceback
report, root, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
failed = []
for name in modules:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        ours = [f for f in frames if os.path.abspath(f.filename).startswith(root)]
        frame = (ours or frames or [None])[-1]
        file = getattr(exc, "filename", None) if isinstance(exc, SyntaxError) else None
        line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
        failed.append({
            "module": name,
            "file": file or (frame.filename if frame else None),
            "line": line or (frame.lineno if frame else None),
            "type": type(exc).__name__,
            "message": str(exc)[:2000],
        })
with open(report, "w", encoding="utf-8") as f:
    json.dump(failed, f)
sys.exit(1 if failed else 0)
"""


def _install_argv(ctx: RungContext, manifests: list[str]) -> list[str] | None:
    assert ctx.env is not None
    if ctx.config.install is not None:
        return expand_command(ctx.config.install, files=manifests)
    args: list[str] = []
    for rel in manifests:
        name = rel.rsplit("/", 1)[-1]
        if name.startswith("requirements"):
            args += ["-r", rel]
    if any(
        m.rsplit("/", 1)[-1] in ("pyproject.toml", "setup.py", "setup.cfg") for m in manifests
    ) or any(m.endswith(".lock") for m in manifests):
        args += ["-e", "."]
    return [str(ctx.env.python), "-m", "pip", "install", "--quiet", *args] if args else None


async def _reinstall(ctx: RungContext, notes: list[str]) -> RungResult | None:
    """Reinstall after a manifest change; a result only when that decides the rung."""
    assert ctx.env is not None
    manifests = [p for p in ctx.existing(ctx.touched) if is_manifest(p)]
    if not manifests:
        return None
    argv = _install_argv(ctx, manifests)
    if argv is None:
        return None
    if ctx.config.install is None and ctx.env.is_habitat_python:
        notes.append(
            f"{', '.join(manifests)} changed, but the project has no environment of its own "
            "(it runs in the habitat's); not reinstalling — set [tool.habitat.ladder].python"
        )
        return None
    if ctx.config.install is None and not ctx.env.has("pip"):
        return skipped(
            ctx,
            RUNG,
            f"pip is not installed in {ctx.env.label}; install with {ctx.env.python} -m ensurepip",
            missing="pip",
        )
    outcome = await ctx.run(RUNG, argv, suffix=".install.out")
    result = from_outcome(ctx, RUNG, outcome, tool="install")
    if result.state == "green":
        notes.append(f"reinstalled after {', '.join(manifests)} changed: {shlex.join(argv)}")
        return None
    if result.state == "red":
        result.reason = (
            f"reinstall failed (exit {outcome.exit_code}) after {', '.join(manifests)} changed"
        )
    return result


async def build_affected(ctx: RungContext) -> RungResult:
    """Regenerate outdated generated sources first (regenerate.py), then the rung."""
    started = time.monotonic()
    notes: list[str] = []
    if ctx.outdated:
        failed = await regenerate(ctx, notes)
        if failed is not None:
            failed.duration_s = round(time.monotonic() - started, 3)
            return failed
    result = await _build(ctx)
    result.notes[:0] = notes
    if notes and result.state == "skipped" and result.missing is None:
        # Regenerating and finding the outputs fresh is a check that ran and passed.
        result.state, result.tool, result.reason = "green", "generate", notes[0]
    result.duration_s = round(time.monotonic() - started, 3)
    return result


@python_rung(RUNG)
async def _build(ctx: RungContext, env: ProjectEnv) -> RungResult:
    started = time.monotonic()
    notes: list[str] = []
    decided = await _reinstall(ctx, notes)
    if decided is not None:
        decided.duration_s = round(time.monotonic() - started, 3)
        return decided
    modules = ctx.impact.affected_modules
    if not modules:
        if any(n.startswith("reinstalled") for n in notes):
            return RungResult(
                rung=RUNG,
                task=ctx.task(RUNG),
                state="green",
                tool="install",
                notes=notes,
                duration_s=round(time.monotonic() - started, 3),
            )
        if notes:
            # The manifest changed and nothing could act on it: not "nothing to do".
            return skipped(ctx, RUNG, notes[0], missing="a project environment")
        return nothing_to_do(ctx, RUNG, "no manifest changed and no package module is affected")
    report = ctx.spool(RUNG, ".json")
    roots = [str(p) for p in ctx.layout.source_roots]
    pythonpath = os.pathsep.join([*roots, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    argv = [str(env.python), "-c", _SMOKE, str(report), str(ctx.root), *modules]
    outcome = await ctx.run(RUNG, argv, extra_env={"PYTHONPATH": pythonpath})
    try:
        failed = json.loads(await anyio.Path(report).read_text(encoding="utf-8"))
        await anyio.Path(report).unlink()
    except (FileNotFoundError, json.JSONDecodeError):
        failed = []
    diagnostics = [
        Diagnostic(
            file=relative(f["file"], ctx.root) if f.get("file") else None,
            line=f.get("line"),
            code=f["type"],
            message=f"import {f['module']}: {f['message']}",
            source="import",
        )
        for f in failed
    ]
    state: RungState | None = None
    if outcome.exit_code == 1 and not failed:
        state = "error"  # the smoke script itself broke, not the project's modules
    result = from_outcome(
        ctx,
        RUNG,
        outcome,
        tool="import-smoke",
        state=state,
        diagnostics=diagnostics,
        notes=notes,
    )
    if result.state == "red" and diagnostics:
        result.reason = f"{len(diagnostics)} module(s) fail to import, first {failed[0]['module']}"
    elif result.state == "error" and result.reason is None:
        result.reason = f"import smoke failed to run: {outcome.tail.strip()[-300:]}"
    result.duration_s = round(time.monotonic() - started, 3)
    return result
