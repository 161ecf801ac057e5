"""The five rungs for a Cargo project.

- `diagnose.files`: `cargo clippy --all-targets` of the touched files' crates (the project's
  lint settings); its warnings kept for the touched files, compile errors wherever they are.
  When `test.scoped` follows in the same climb, clippy runs inside `cargo test --no-run
  --all-targets` instead (fused.py), of those crates and every crate the change reaches
  (test.scoped's): the same lints, and the test binaries built in the same pass, so the
  tests compile nothing a second time and `compile.project` checks nothing again. When that
  build stops at errors, they are its own, and `cargo clippy --all-targets` gives HEAD's
  (HEAD's check costs less than HEAD's test build, and the climb stops there anyway).
- `compile.project`: `cargo check --all-targets` of the affected crates — unless this climb's
  clippy run already checked them all (green): clippy is cargo check plus lints.
- `build.affected`: `cargo build` of the affected crates (with fused.py's wrapper when the
  climb uses it, so its units are the ones the tests link).
- `test.scoped` / `test.full`: tests.py.
Findings of the three compiler rungs are settled against the same command on HEAD."""

from __future__ import annotations

import shutil

from ...models import Diagnostic, RungName, RungResult
from ...rungs.context import RungContext, nothing_to_do
from .cargo import (
    TOOL_NOTE,
    affected_of,
    cargo_rung,
    clippy_covered,
    graph_note,
    packages,
    remember_clippy,
    run_compiler,
)
from .detect import owns
from .fused import clippy_errors, fused_env, unfuse, without_clippy
from .metadata import CrateGraph

__all__ = ["build_affected", "compile_project", "diagnose_files"]

_JSON = "--message-format=json"


def _no_rust_files(ctx: RungContext) -> str | None:
    if not ctx.existing(ctx.touched):
        return "no touched files"
    if not any(owns(p) for p in ctx.existing(ctx.touched)):
        return f"no Rust files among the {len(ctx.touched)} touched files"
    return None


def _nothing_touched(ctx: RungContext) -> str | None:
    return None if ctx.touched else "no touched files"


async def _affected(ctx: RungContext, graph: CrateGraph) -> list[str]:
    return (await affected_of(ctx, graph)).crates


@cargo_rung("diagnose.files", no_work=_no_rust_files)
async def diagnose_files(ctx: RungContext, graph: CrateGraph) -> RungResult:
    rung: RungName = "diagnose.files"
    files = [p for p in ctx.existing(ctx.touched) if p.endswith(".rs")]
    crates = sorted({c.name for p in files if (c := graph.crate_of(p)) is not None})
    if not crates:
        return nothing_to_do(ctx, rung, "no touched .rs file belongs to a crate of the workspace")
    touched = set(files)

    def keep(d: Diagnostic) -> bool:
        return d.severity == "error" or d.file in touched

    has_clippy = shutil.which("cargo-clippy", path=ctx.process_env().get("PATH")) is not None
    notes = [f"crates {', '.join(crates)}; warnings kept for the {len(files)} touched file(s)"]
    if has_clippy:
        verb, tool = "clippy", "cargo clippy"
    else:
        verb, tool = "check", "cargo check"
        notes.append("clippy is not installed (rustup component add clippy); compiler lints only")
    notes += graph_note(ctx)
    argv = ["cargo", verb, _JSON, "--all-targets", *packages(crates)]
    fused = await fused_env(ctx) if has_clippy and "test.scoped" in ctx.rungs else None
    if isinstance(fused, dict):
        # The build test.scoped needs: the touched crates and every crate they reach, in one
        # cargo run (one feature resolution: the units test.scoped's `cargo test -p` of the
        # same crates finds fresh), which is compile.project's check of them too.
        reached = await _affected(ctx, graph)
        if set(reached) - set(crates):
            crates = sorted({*crates, *reached})
            notes.append(
                f"built with the crates the change reaches, {', '.join(crates)} "
                "(their warnings dropped, their errors kept)"
            )
        argv = ["cargo", "test", "--no-run", _JSON, "--all-targets", *packages(crates)]
        notes.append(
            "clippy ran inside the test build (clippy-driver as rustc's workspace wrapper, "
            "cargo test --no-run --all-targets): the lints of cargo clippy --all-targets, and "
            "test.scoped's binaries compiled in the same pass"
        )
    elif isinstance(fused, str):
        notes.append(f"clippy and the tests compile apart: {fused}")
    extra = fused if isinstance(fused, dict) else None
    check = ["cargo", "clippy", _JSON, "--all-targets", *packages(crates)]
    result = await run_compiler(
        ctx,
        rung,
        argv,
        tool=tool,
        keep=keep,
        notes=notes,
        extra_env=extra,
        on_errors=check if extra is not None else None,
    )
    if has_clippy:
        remember_clippy(ctx, crates, result)
    if extra is not None and (denied := clippy_errors(result.diagnostics)):
        unfuse(ctx, without_clippy(denied))
    return result


@cargo_rung("compile.project", no_work=_nothing_touched)
async def compile_project(ctx: RungContext, graph: CrateGraph) -> RungResult:
    rung: RungName = "compile.project"
    crates = await _affected(ctx, graph)
    if not crates:
        return nothing_to_do(ctx, rung, "no crate is affected by the change")
    notes = [f"affected crates: {', '.join(crates)}"]
    clipped = clippy_covered(ctx, crates)
    if clipped is not None:
        # clippy is rustc's check with lints on top: what cargo check would say, it said.
        return clipped.model_copy(
            update={
                "rung": rung,
                "task": ctx.task(rung),
                "duration_s": 0.0,
                "diagnostics": [d for d in clipped.diagnostics if d.severity == "error"],
                "notes": [
                    TOOL_NOTE.format(tool="cargo clippy"),
                    *notes,
                    "checked by diagnose.files' clippy run of this climb (all targets of "
                    "these crates; clippy is cargo check plus lints): not checked twice",
                    *(
                        ["that run was clippy-driver's test build: it compiled what it checked"]
                        if clipped.command[1:3] == ["test", "--no-run"]
                        else []
                    ),
                ],
            }
        )
    argv = ["cargo", "check", _JSON, "--all-targets", *packages(crates)]
    return await run_compiler(ctx, rung, argv, tool="cargo check", notes=notes)


@cargo_rung("build.affected", no_work=_nothing_touched)
async def build_affected(ctx: RungContext, graph: CrateGraph) -> RungResult:
    rung: RungName = "build.affected"
    crates = await _affected(ctx, graph)
    if not crates:
        return nothing_to_do(ctx, rung, "no crate is affected by the change")
    argv = ["cargo", "build", _JSON, *packages(crates)]
    notes = [f"affected crates: {', '.join(crates)}"]
    fused = await fused_env(ctx)
    if isinstance(fused, dict):
        notes.append(
            "built with clippy-driver as rustc's workspace wrapper, as diagnose.files and the "
            "tests build (the same code; its units are the ones the tests link)"
        )
    extra = fused if isinstance(fused, dict) else None
    result = await run_compiler(ctx, rung, argv, tool="cargo build", notes=notes, extra_env=extra)
    if extra is not None and (denied := clippy_errors(result.diagnostics)):
        # A lint the project denies stopped clippy-driver's build: build as rustc builds.
        notes = [*notes[:1], without_clippy(denied)]
        result = await run_compiler(ctx, rung, argv, tool="cargo build", notes=notes)
    return result
