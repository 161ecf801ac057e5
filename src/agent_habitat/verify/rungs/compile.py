"""`compile.project`: type-check the affected modules — mypy through the warm dmypy daemon,
or pyright/basedpyright when the project configures it; `compileall` when no type checker
is configured."""

from __future__ import annotations

import configparser
import tomllib
from pathlib import Path

from ..config import LadderConfig
from ..environments import ProjectEnv
from ..models import RungName, RungResult, RungState
from ..parsers import parse_compileall, parse_mypy, parse_pyright
from .context import RungContext, from_outcome, nothing_to_do, python_rung, skipped
from .dmypy import MYPY_FLAGS, DmypyDaemon

__all__ = ["compile_project", "detect_type_checker"]

RUNG: RungName = "compile.project"


def _has_ini_section(path: Path, section: str) -> bool:
    if not path.is_file():
        return False
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except configparser.Error:
        return False
    return parser.has_section(section)


def detect_type_checker(root: Path, config: LadderConfig) -> str:
    """The configured checker, else the one the project's files configure, else compileall."""
    if config.type_checker != "auto":
        return config.type_checker
    tool: dict[str, object] = {}
    if (root / "pyproject.toml").is_file():
        with open(root / "pyproject.toml", "rb") as f:
            tool = tomllib.load(f).get("tool", {})
    if "basedpyright" in tool:
        return "basedpyright"
    if "pyright" in tool or (root / "pyrightconfig.json").is_file():
        return "pyright"
    if (
        "mypy" in tool
        or (root / "mypy.ini").is_file()
        or (root / ".mypy.ini").is_file()
        or _has_ini_section(root / "setup.cfg", "mypy")
    ):
        return "mypy"
    return "compileall"


def _version_flags(root: Path, env: ProjectEnv) -> list[str]:
    """`--python-version` of the project's interpreter when the habitat's own mypy (another
    Python) checks it and the project's mypy config does not pin a version."""
    if env.has("mypy") or env.is_habitat_python or not env.version:
        return []
    tool: dict[str, object] = {}
    if (root / "pyproject.toml").is_file():
        with open(root / "pyproject.toml", "rb") as f:
            tool = tomllib.load(f).get("tool", {})
    mypy_table = tool.get("mypy")
    if isinstance(mypy_table, dict) and "python_version" in mypy_table:
        return []
    for name in ("mypy.ini", ".mypy.ini", "setup.cfg"):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(root / name, encoding="utf-8")
        except configparser.Error:
            continue
        if parser.has_option("mypy", "python_version"):
            return []
    return ["--python-version", ".".join(env.version.split(".")[:2])]


def _prefer_stubs(root: Path, targets: list[str]) -> list[str]:
    # A module with a stub next to it is typed by the stub: checking the `.py` by name would
    # judge code the project never type-checks (mypy and pyright both let the stub win).
    out: list[str] = []
    for rel in targets:
        stub = rel[:-3] + ".pyi" if rel.endswith(".py") else rel
        out.append(stub if (root / stub).is_file() else rel)
    return sorted(set(out))


def _summary(result: RungResult) -> None:
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if result.state == "red" and errors:
        first = errors[0]
        where = f"{first.file}:{first.line} {first.code or ''}".rstrip()
        result.reason = f"{len(errors)} {result.tool} error(s), first {where}"


async def _mypy(ctx: RungContext, targets: list[str]) -> RungResult:
    assert ctx.env is not None
    if ctx.config.dmypy:
        daemon = DmypyDaemon(ctx.workspace)
        note = daemon.prepare()
        argv = daemon.argv(ctx.env, [*_version_flags(ctx.root, ctx.env), *targets])
        outcome = await ctx.run(RUNG, argv, reap_leftovers=False)
        tool = "dmypy"
        if outcome.exit_code == 2 and "Daemon crashed" in outcome.text:
            note = "dmypy daemon crashed during the check; the next run restarts it"
    else:
        prefix, extra = ctx.env.mypy()
        flags = [*MYPY_FLAGS, *extra, *_version_flags(ctx.root, ctx.env)]
        outcome = await ctx.run(RUNG, [*prefix, *flags, *targets])
        note, tool = None, "mypy"
    diagnostics = parse_mypy(outcome.text, ctx.root)
    state: RungState | None = None if outcome.exit_code in (0, 1) else "error"
    errors = [d for d in diagnostics if d.severity == "error"]
    if outcome.exit_code == 1 and not errors and "error" not in outcome.text:
        # dmypy exits 1 on any output, notes included (e.g. mypy's unused-config note);
        # mypy itself exits 0 there.
        state = "green"
    result = from_outcome(
        ctx,
        RUNG,
        outcome,
        tool=tool,
        state=state,
        diagnostics=diagnostics,
        notes=[note] if note else [],
    )
    if result.state == "error" and result.reason is None:
        result.reason = f"{tool} failed (exit {outcome.exit_code}): {outcome.tail.strip()[-300:]}"
    _summary(result)
    return result


async def _pyright(ctx: RungContext, name: str, targets: list[str]) -> RungResult:
    assert ctx.env is not None
    tool = ctx.env.node_tool(name)
    if tool is None:
        return skipped(
            ctx,
            RUNG,
            f"{name} is configured but not installed; install with {ctx.env.install_hint(name)}",
            missing=name,
        )
    argv = [*tool, "--outputjson", "--pythonpath", str(ctx.env.python), *targets]
    outcome = await ctx.run(RUNG, argv)
    state: RungState | None = None if outcome.exit_code in (0, 1) else "error"
    diagnostics = parse_pyright(outcome.text, ctx.root, source=name)
    result = from_outcome(ctx, RUNG, outcome, tool=name, state=state, diagnostics=diagnostics)
    if result.state == "error" and result.reason is None:
        result.reason = f"{name} failed (exit {outcome.exit_code})"
    _summary(result)
    return result


@python_rung(RUNG)
async def compile_project(ctx: RungContext, env: ProjectEnv) -> RungResult:
    targets = ctx.existing(ctx.impact.affected_files)
    if not targets:
        return nothing_to_do(ctx, RUNG, "no package module is affected by the change")
    checker = detect_type_checker(ctx.root, ctx.config)
    if checker == "mypy":
        return await _mypy(ctx, _prefer_stubs(ctx.root, targets))
    if checker in ("pyright", "basedpyright"):
        return await _pyright(ctx, checker, _prefer_stubs(ctx.root, targets))
    outcome = await ctx.run(RUNG, [str(env.python), "-m", "compileall", "-q", *targets])
    result = from_outcome(
        ctx,
        RUNG,
        outcome,
        tool="compileall",
        diagnostics=parse_compileall(outcome.text, ctx.root),
        notes=["no type checker configured; byte-compiled the affected modules"],
    )
    _summary(result)
    return result
