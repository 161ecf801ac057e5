"""`diagnose.files`: the touched Python files — a syntax check in-process, then one
`ruff check` over all of them (no process per file); only findings that are not at HEAD
too make it red."""

from __future__ import annotations

import sys
import time

import anyio
import anyio.to_thread

from ...regular import read_regular
from ..command import take_report
from ..environments import ProjectEnv
from ..models import Diagnostic, RungName, RungResult, RungState
from ..parsers import parse_ruff
from ..python_ast import parse
from .compare import settle
from .context import RungContext, from_outcome, nothing_to_do
from .lint import DEFAULT_SELECT, ruff_argv, ruff_base, ruff_configured
from .preamble import python_rung
from .same_types import parses_as_head

__all__ = ["diagnose_files"]

RUNG: RungName = "diagnose.files"


def _syntax_errors(ctx: RungContext, files: list[str]) -> list[Diagnostic]:
    """Each file compiled, but one whose edit is whole-line comments and blank lines in a
    file HEAD's version of which parsed (a comment's verify: parsing a 900-line module took
    25-50 ms at load 40, beside ruff, holding the interpreter's lock)."""
    out: list[Diagnostic] = []
    head = ctx.snapshot.head
    for rel in files:
        if not rel.endswith(".py"):
            continue
        try:
            source = read_regular(ctx.root / rel, rel)
            if head is not None and parses_as_head(ctx.root, head, rel, source):
                continue
            parse(source, rel)
        except SyntaxError as exc:
            out.append(
                Diagnostic(
                    file=rel,
                    line=exc.lineno,
                    col=exc.offset,
                    code=type(exc).__name__,
                    message=exc.msg,
                    source="syntax",
                )
            )
        except (OSError, ValueError) as exc:
            out.append(Diagnostic(file=rel, code="unreadable", message=str(exc), source="syntax"))
    return out


def _newer_than_us(version: str) -> bool:
    # The project's Python may accept syntax ours does not; ruff then judges syntax alone.
    try:
        major, minor = (int(x) for x in version.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) > sys.version_info[:2]


def _no_files(ctx: RungContext) -> str | None:
    return None if ctx.existing(ctx.touched) else "no touched files"


@python_rung(RUNG, no_work=_no_files)
async def diagnose_files(ctx: RungContext, env: ProjectEnv) -> RungResult:
    files = [p for p in ctx.existing(ctx.touched) if p.endswith((".py", ".pyi"))]
    if not files:
        return nothing_to_do(
            ctx, RUNG, f"no Python files among the {len(ctx.touched)} touched files"
        )
    started = time.monotonic()
    report = ctx.spool(RUNG, ".json")
    configs = await anyio.to_thread.run_sync(ruff_configured, ctx.root, files)
    argv = ruff_argv(ctx, env, configs)
    errors: list[Diagnostic] = []

    async def syntax() -> None:
        errors.extend(await anyio.to_thread.run_sync(_syntax_errors, ctx, files))

    # The syntax check (a compile per file, ~0.1 s for a 5,000-line module) runs while ruff
    # does, not before it. ruff starts no processes of its own: no scan of the process table
    # for leftovers after it (one scan costs ~0.2 s on a busy machine; three for a kill_tree).
    async with anyio.create_task_group() as tg:
        if not _newer_than_us(env.version):
            tg.start_soon(syntax)
        outcome = await ctx.run(
            RUNG, [*argv, "--output-file", str(report), *files], reap_leftovers=False
        )
    if errors:
        await anyio.Path(report).unlink(missing_ok=True)
        return RungResult(
            rung=RUNG,
            task=ctx.task(RUNG),
            state="red",
            reason=f"syntax error in {errors[0].file}:{errors[0].line}",
            tool="python-syntax",
            duration_s=round(time.monotonic() - started, 3),
            diagnostics=errors,
        )
    diagnostics = parse_ruff(await take_report(report), ctx.root)
    state: RungState | None = None if outcome.exit_code in (0, 1) else "error"
    result = from_outcome(ctx, RUNG, outcome, tool="ruff", state=state, diagnostics=diagnostics)
    if not configs:
        select = "ruff's defaults" if ctx.config.lint == "strict" else DEFAULT_SELECT
        result.notes.append(
            f"the project configures no ruff; checked {select} "
            "(add [tool.ruff] to pyproject.toml, or ruff.toml, for your own rules)"
        )
    if state == "error" and result.reason is None:
        result.reason = f"ruff failed (exit {outcome.exit_code}): {outcome.tail.strip()[-200:]}"
    elif result.state == "red" and diagnostics:
        first = diagnostics[0]
        result.reason = (
            f"{len(diagnostics)} ruff finding(s), first {first.file}:{first.line} {first.code}"
        )
    with_findings = sorted({d.file for d in diagnostics if d.file})
    result = await settle(
        ctx,
        result,
        lambda head: ruff_base(ctx, head, argv, configs, with_findings),
    )
    result.duration_s = round(time.monotonic() - started, 3)
    return result
