"""The five rungs for a Cargo project.

- `diagnose.files`: `cargo clippy --all-targets` of the touched files' crates (the project's
  lint settings); its warnings kept for the touched files, compile errors wherever they are.
  When `compile.project` follows in the same climb, of those crates and every crate the
  change reaches (compile.project's): the same check, done once. It runs in the habitat's
  own target folder (`check_target_dir`), so the tests, started beside it
  (verify/ahead.py), build in the project's `target/` at the same time instead of waiting
  for cargo's lock on it, and its clippy-driver units (which cargo hashes apart from
  rustc's) never stand in the user's way.
- `compile.project`: `cargo check --all-targets` of the affected crates (in the same folder)
  — unless this climb's clippy run already checked them all (green): clippy is cargo check
  plus lints.
- `build.affected`: `cargo build` of the affected crates.
- `test.scoped` / `test.full`: tests.py, built as the user's own `cargo test` builds them
  (the same units: a verdict leaves the user's next `cargo test` nothing to compile, and the
  user's last build leaves the verdict only the edit to compile).
Findings of the three compiler rungs are settled against the same command on HEAD."""

from __future__ import annotations

import shlex
import shutil
import time

from ...models import Diagnostic, RungName, RungResult
from ...rungs.context import RungContext, nothing_to_do
from .cargo import (
    EVERY_UNIT,
    TOOL_NOTE,
    cargo_rung,
    check_env,
    check_target_dir,
    clippy_covered,
    graph_note,
    packages,
    remember_clippy,
    run_compiler,
    seed_target,
)
from .change import affected_of
from .detect import owns
from .lib_check import decided_by, run_judged
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
    if "compile.project" in ctx.rungs:
        # compile.project's check of every crate the change reaches, in the same run (one
        # feature resolution): clippy is cargo check plus lints.
        reached = await _affected(ctx, graph)
        if set(reached) - set(crates):
            crates = sorted({*crates, *reached})
            notes.append(
                f"checked with the crates the change reaches, {', '.join(crates)} "
                "(their warnings dropped, their errors kept)"
            )
    argv = ["cargo", verb, _JSON, *EVERY_UNIT, *packages(crates)]
    started = time.monotonic()
    env = check_env(ctx)
    await seed_target(ctx, graph, check_target_dir(ctx))
    outcome, check = await run_judged(ctx, rung, graph, argv, tool=tool, extra_env=env)
    if check is not None:
        ran = RungResult(
            rung=rung,
            task=ctx.task(rung),
            state="red",
            tool=tool,
            duration_s=round(time.monotonic() - started, 3),
            command=argv,
            command_line=shlex.join(argv),
            exit_code=None if outcome is None else outcome.exit_code,
            notes=[TOOL_NOTE.format(tool=tool), *notes],
        )
        if outcome is None:
            ran.notes.append(f"{tool} stopped once the compile error was judged")
        return decided_by(ran, check, f"{tool}'s own findings")
    result = await run_compiler(
        ctx, rung, argv, tool=tool, keep=keep, notes=notes, extra_env=env, outcome=outcome
    )
    remember_clippy(ctx, crates, result)
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
                    f"checked by diagnose.files' {clipped.tool} run of this climb (all "
                    "targets of these crates; clippy is cargo check plus lints): not checked "
                    "twice",
                ],
            }
        )
    argv = ["cargo", "check", _JSON, *EVERY_UNIT, *packages(crates)]
    await seed_target(ctx, graph, check_target_dir(ctx))
    return await run_compiler(
        ctx, rung, argv, tool="cargo check", notes=notes, extra_env=check_env(ctx)
    )


@cargo_rung("build.affected", no_work=_nothing_touched)
async def build_affected(ctx: RungContext, graph: CrateGraph) -> RungResult:
    rung: RungName = "build.affected"
    crates = await _affected(ctx, graph)
    if not crates:
        return nothing_to_do(ctx, rung, "no crate is affected by the change")
    argv = ["cargo", "build", _JSON, *packages(crates)]
    notes = [f"affected crates: {', '.join(crates)}"]
    return await run_compiler(ctx, rung, argv, tool="cargo build", notes=notes)
