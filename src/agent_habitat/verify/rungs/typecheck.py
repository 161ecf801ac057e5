"""`compile.project` for the checkers other than mypy: pyright or basedpyright, ty and
pyrefly, each the project configures (`[tool.pyright]`/`pyrightconfig.json`,
`[tool.basedpyright]`, `[tool.ty]`/`ty.toml`, `[tool.pyrefly]`/`pyrefly.toml`).

pyright, basedpyright and ty answer from a warm language server in a habitat server
(warm_checker.py), started by the warm-up or the first verify; a one-shot `habitat verify`,
and any check the server could not answer, run the tool's CLI cold. pyrefly always runs
cold: its language server (1.5.0) kept answering a dependent module's old diagnostics after
the module it imports changed, which a verdict cannot afford. Every finding is compared
with the same tool's CLI run on HEAD (baseline-aware, like mypy).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from ..command import Outcome, answered
from ..environments import ProjectEnv
from ..models import Diagnostic, RungName, RungResult, RungState
from ..parsers import parse_pyrefly, parse_pyright, parse_ty
from . import warm_checker
from .checkers import install_hint
from .compare import head_of
from .context import RungContext, from_outcome, skipped
from .head_check import Parse, check_on_head, settle_on_head
from .lsp import LspError
from .pyright_tools import (
    PACKAGE,
    Checker,
    fetch_basedpyright,
    find_checker,
    locate,
    tools_venv,
)
from .warm_checker import ServerSpec

__all__ = [
    "pyrefly",
    "pyrefly_argv",
    "pyright_argv",
    "pyright_family",
    "pyright_parse",
    "server_spec",
    "ty",
    "ty_argv",
    "ty_env",
    "warm_baseline",
]

RUNG: RungName = "compile.project"
_SEVERITY = {1: "error", 2: "warning", 3: "information"}  # 4 (hint) is never in CLI output


def summary(result: RungResult) -> None:
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if result.state == "red" and errors:
        first = errors[0]
        where = f"{first.file}:{first.line} {first.code or ''}".rstrip()
        result.reason = f"{len(errors)} {result.tool} error(s), first {where}"


def ty_env(env: ProjectEnv) -> dict[str, str]:
    """The environment ty gets, CLI and server alike: the project's venv as `VIRTUAL_ENV`
    (the server takes no `--python`), nothing when the interpreter is not a venv's."""
    prefix = Path(env.prefix) if env.prefix else None
    if prefix is not None and (prefix / "pyvenv.cfg").is_file():
        return {"VIRTUAL_ENV": str(prefix)}
    return {}


def server_spec(ctx: RungContext, env: ProjectEnv, tool: str, binary: Path) -> ServerSpec | None:
    """How to run `tool`'s language server next to its CLI `binary`; None without one."""
    if tool == "ty":
        process_env = ctx.process_env(ty_env(env))
        return ServerSpec(tool="ty", argv=[str(binary), "server"], env=process_env)
    server = binary.with_name(f"{binary.name}-langserver")
    if not server.is_file():
        return None
    section = {"pythonPath": str(env.python)}
    settings: dict[str, Any] = {"python": section, f"{tool}": {}, f"{tool}.analysis": {}}
    if tool == "pyright":
        settings["python.analysis"] = {}
    return ServerSpec(
        tool=tool, argv=[str(server), "--stdio"], env=ctx.process_env(), settings=settings
    )


async def _warm(
    ctx: RungContext,
    spec: ServerSpec,
    targets: list[str],
    render: Any,
    notes: list[str],
) -> Outcome | None:
    """The warm server's answer as the CLI's outcome; None (and why, in `notes`) when the
    CLI must run instead."""
    if not ctx.config.warm_checker:
        notes.append(f"{spec.tool} ran cold: [tool.habitat.ladder] warm_checker = false")
        return None
    head = head_of(ctx)
    commit = "" if isinstance(head, str) else head.head
    may_start = ctx.hooks is not None  # a one-shot climb keeps no server
    warm, said = await warm_checker.get(ctx.workspace, ctx.root, spec, commit, may_start=may_start)
    if said:
        notes.append(said)
    if warm is None:
        if not may_start:
            notes.append(f"{spec.tool} ran cold: a one-shot verify keeps no language server")
        return None
    started = time.monotonic()
    touched = list(ctx.touched)
    try:
        found = await anyio.to_thread.run_sync(
            warm.check, targets, touched, ctx.config.timeout_s, abandon_on_cancel=True
        )
    except (LspError, OSError) as exc:
        await warm_checker.failed(ctx.workspace)
        notes.append(f"{spec.tool}'s language server failed ({exc}); stopped, ran the CLI cold")
        return None
    text, errors = render(ctx.root, found)
    pid = warm.record.pid if warm.record else "?"
    notes.append(f"{spec.tool}: the warm language server (pid {pid}) checked the change")
    return await answered(
        [*spec.argv, *targets],  # what the server was asked about
        1 if errors else 0,
        text,
        ctx.spool(RUNG),
        started,
        ctx.config.output_cap_bytes,
    )


def _pyright_json(level_error: bool) -> Any:
    def render(root: Path, found: dict[str, list[dict[str, Any]]]) -> tuple[str, int]:
        items = []
        for rel, diags in found.items():
            for d in diags:
                severity = _SEVERITY.get(int(d.get("severity", 1)))
                if severity is None or (level_error and severity != "error"):
                    continue
                item: dict[str, Any] = {"file": str(root / rel), "severity": severity}
                item["message"] = d.get("message", "")
                span = d.get("range") or {}
                if any(v for end in span.values() for v in end.values()):
                    # The CLI leaves an all-zero range out (a file-level finding such as
                    # reportImportCycles); the server always sends one.
                    item["range"] = span
                if d.get("code") is not None:
                    item["rule"] = d["code"]
                items.append(item)
        text = json.dumps({"generalDiagnostics": items}, indent=1)
        return text, sum(i["severity"] == "error" for i in items)

    return render


def _ty_lines(root: Path, found: dict[str, list[dict[str, Any]]]) -> tuple[str, int]:
    lines, errors = [], 0
    for rel, diags in found.items():
        for d in diags:
            severity = {1: "error", 2: "warning", 3: "info"}.get(int(d.get("severity", 1)))
            if severity is None:
                continue
            start = (d.get("range") or {}).get("start") or {}
            first = str(d.get("message", "")).splitlines()[0] if d.get("message") else ""
            where = f"{rel}:{int(start.get('line', 0)) + 1}:{int(start.get('character', 0)) + 1}"
            lines.append(f"{where}: {severity}[{d.get('code')}] {first}")
            errors += severity == "error"
    return "".join(f"{ln}\n" for ln in lines), errors


async def _finish(
    ctx: RungContext,
    outcome: Outcome,
    *,
    tool: str,
    parse: Parse,
    notes: list[str],
    base_argv: list[str],
    baseline: list[str],
) -> RungResult:
    state: RungState | None = None if outcome.exit_code in (0, 1) else "error"
    result = from_outcome(
        ctx,
        RUNG,
        outcome,
        tool=tool,
        state=state,
        diagnostics=parse(outcome.text, ctx.root),
        notes=notes,
    )
    if result.state == "error" and result.reason is None:
        said = outcome.tail.strip()[-300:]
        result.reason = f"{tool} failed (exit {outcome.exit_code}): {said}"
    summary(result)
    # HEAD is checked over the whole package, not the affected modules: one run per HEAD
    # (cached; the warm-up makes it), whatever a verify's affected set. A file's findings
    # do not depend on which other files were listed.
    return await settle_on_head(
        ctx, RUNG, result, tool=tool, argv=base_argv, targets=baseline, parse=parse
    )


def pyright_argv(checker: Checker, env: ProjectEnv) -> list[str]:
    return [*checker.argv, "--outputjson", "--pythonpath", str(env.python), *checker.flags()]


def ty_argv(binary: Path, env: ProjectEnv) -> list[str]:
    # `--python` here, `VIRTUAL_ENV` for the server (it takes no flag): the same environment.
    flags = ["--output-format", "concise", "--no-progress", "--color=never"]
    return [str(binary), "check", *flags, "--python", str(env.python)]


def pyrefly_argv(binary: Path, env: ProjectEnv) -> list[str]:
    flags = ["--output-format", "json", "--color", "never"]
    return [str(binary), "check", *flags, "--python-interpreter-path", str(env.python)]


def pyright_parse(tool: str) -> Parse:
    def parse(text: str, root: Path) -> list[Diagnostic]:
        return parse_pyright(text, root, source=tool)

    return parse


async def warm_baseline(
    ctx: RungContext, tool: str, argv: list[str], parse: Parse, every: list[str]
) -> str:
    """HEAD's findings over the whole package, into the baseline cache the rung reads (for
    the warm-up); what happened, in words."""
    head = head_of(ctx)
    if isinstance(head, str):
        return f"no HEAD baseline: {head}"
    found = await check_on_head(ctx, RUNG, head, tool=tool, argv=argv, targets=every, parse=parse)
    if isinstance(found, str):
        return f"HEAD baseline failed: {found}"
    base, cached = found
    return f"HEAD baseline {len(base.findings)} finding(s){' (cached)' if cached else ''}"


async def pyright_family(
    ctx: RungContext, env: ProjectEnv, name: str, targets: list[str], baseline: list[str]
) -> RungResult:
    """pyright or basedpyright, as the project configures (basedpyright standing in)."""
    checker = find_checker(env.bin_dir, name)
    fetched: str | None = None
    if checker is None and ctx.config.fetch_checkers:
        failed = await fetch_basedpyright(
            lambda argv: ctx.run(RUNG, argv, suffix=".fetch.out", reap_leftovers=False)
        )
        checker = find_checker(env.bin_dir, name)
        fetched = failed or (f"fetched {PACKAGE} into {tools_venv()} (once; later rungs reuse it)")
    if checker is None:
        command, about = install_hint(env, name)
        why = f"; fetching {PACKAGE} failed: {fetched}" if fetched else ""
        return skipped(
            ctx,
            RUNG,
            f"the project configures {name}, which is not installed; install with {command} "
            f"({about}){why}",
            missing=command,
        )
    argv = pyright_argv(checker, env)
    tool = checker.name
    parse = pyright_parse(tool)
    notes = [n for n in (fetched, checker.note(name)) if n]
    outcome = None
    spec = server_spec(ctx, env, tool, Path(checker.argv[0]))
    if spec is not None:
        outcome = await _warm(ctx, spec, targets, _pyright_json(checker.stand_in), notes)
    if outcome is None:
        outcome = await ctx.run(RUNG, [*argv, *targets])
    return await _finish(
        ctx, outcome, tool=tool, parse=parse, notes=notes, base_argv=argv, baseline=baseline
    )


def _missing(ctx: RungContext, env: ProjectEnv, name: str) -> RungResult:
    command = f"{env.python} -m pip install {name}"
    return skipped(
        ctx,
        RUNG,
        f"the project configures {name}, which is not installed; install with {command} "
        "(a wheel with the binary; the habitat's own environment, the project's or PATH)",
        missing=command,
    )


async def ty(
    ctx: RungContext, env: ProjectEnv, targets: list[str], baseline: list[str]
) -> RungResult:
    hit = locate(env.bin_dir, "ty")
    if hit is None:
        return _missing(ctx, env, "ty")
    binary = hit[0]
    argv = ty_argv(binary, env)
    notes: list[str] = []
    spec = server_spec(ctx, env, "ty", binary)
    assert spec is not None
    outcome = await _warm(ctx, spec, targets, _ty_lines, notes)
    if outcome is None:
        outcome = await ctx.run(RUNG, [*argv, *targets])
    return await _finish(
        ctx, outcome, tool="ty", parse=parse_ty, notes=notes, base_argv=argv, baseline=baseline
    )


async def pyrefly(
    ctx: RungContext, env: ProjectEnv, targets: list[str], baseline: list[str]
) -> RungResult:
    hit = locate(env.bin_dir, "pyrefly")
    if hit is None:
        return _missing(ctx, env, "pyrefly")
    argv = pyrefly_argv(hit[0], env)
    notes = [
        "pyrefly ran cold: its language server kept a dependent module's old diagnostics "
        "after the module it imports changed (pyrefly 1.5.0), so no warm server is used"
    ]
    outcome = await ctx.run(RUNG, [*argv, *targets])
    return await _finish(
        ctx,
        outcome,
        tool="pyrefly",
        parse=parse_pyrefly,
        notes=notes,
        base_argv=argv,
        baseline=baseline,
    )
