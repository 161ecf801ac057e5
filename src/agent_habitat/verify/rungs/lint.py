"""ruff for `diagnose.files`: which rules (the project's configuration first), and the same
check on HEAD's version of each file for the baseline.

HEAD's content goes to `ruff check --stdin-filename PATH -`, so ruff resolves its
configuration (and per-file ignores, excludes) exactly as for the working file. Base
findings are cached per (path, HEAD blob, ruff configuration): a second run costs nothing.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import anyio
import anyio.to_thread

from ..baseline import BaseResult, fingerprint
from ..command import take_report
from ..environments import ProjectEnv
from ..head import HeadTree
from ..models import Diagnostic, RungName
from ..parsers import parse_ruff
from .compare import cache_of
from .context import RungContext

__all__ = [
    "DEFAULT_SELECT",
    "ruff_argv",
    "ruff_base",
    "ruff_base_key",
    "ruff_config_key",
    "ruff_configured",
]

RUNG: RungName = "diagnose.files"
# Bugs, not style: pyflakes (undefined names, unused imports, …) and syntax errors.
DEFAULT_SELECT = "F,E9"
_CONFIG_NAMES = ("ruff.toml", ".ruff.toml", "pyproject.toml")
_PARALLEL = 4


_HAS_RUFF: dict[tuple[Path, int, int, int], bool] = {}
"""pyproject.toml → whether it has `[tool.ruff]`, by its path, inode, size and mtime: parsed
again only when it changed (a parse was most of the 12 ms this took per verify at load 18)."""


def _pyproject_has_ruff(path: Path, st: os.stat_result) -> bool:
    key = (path, st.st_ino, st.st_size, st.st_mtime_ns)
    found = _HAS_RUFF.get(key)  # worker threads share it: one get, one set
    if found is None:
        try:
            with open(path, "rb") as f:
                found = "ruff" in tomllib.load(f).get("tool", {})
        except (OSError, tomllib.TOMLDecodeError):
            found = False
        if len(_HAS_RUFF) > 256:
            _HAS_RUFF.clear()
        _HAS_RUFF[key] = found
    return found


def _configures_ruff(folder: Path) -> Path | None:
    for name in _CONFIG_NAMES:
        path = folder / name
        try:
            st = path.stat()
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        if name != "pyproject.toml" or _pyproject_has_ruff(path, st):
            return path
    return None


def ruff_configured(root: Path, files: list[str]) -> list[Path]:
    """The ruff configuration files that apply to `files`, as ruff finds them: the closest
    `ruff.toml`, `.ruff.toml` or `pyproject.toml` with `[tool.ruff]` in a file's folder or
    above it (up through the project's parents). Empty: the project configures no ruff."""
    found: set[Path] = set()
    folders = {(root / f).parent for f in files} | {root}
    for start in folders:
        for folder in [start, *start.parents]:
            config = _configures_ruff(folder)
            if config is not None:
                found.add(config)
                break
    return sorted(found)


def ruff_argv(ctx: RungContext, env: ProjectEnv, configs: list[Path]) -> list[str]:
    """`ruff check` with JSON output; the bug-finding rules when nothing is configured."""
    select = [] if configs or ctx.config.lint == "strict" else ["--select", DEFAULT_SELECT]
    return [*env.ruff(), "check", "--output-format", "json", "--no-fix", "--force-exclude", *select]


async def _one(
    ctx: RungContext, head: HeadTree, argv: list[str], rel: str, key: str, index: int
) -> list[Diagnostic] | str:
    content = await anyio.to_thread.run_sync(head.read, rel)
    if content is None:
        return []
    source = ctx.spool(RUNG, f".base{index}.py")
    report = ctx.spool(RUNG, f".base{index}.json")
    await anyio.Path(source).write_bytes(content)
    # Feed HEAD's content on stdin without a pipe the habitat would hold.
    shell = ["/bin/sh", "-c", 'exec "$@" < "$0"', str(source)]
    outcome = await ctx.run(
        RUNG,
        [*shell, *argv, "--output-file", str(report), "--stdin-filename", rel, "-"],
        suffix=f".base{index}.out",
        reap_leftovers=False,  # ruff starts no processes (see diagnose.py)
    )
    try:
        text = await take_report(report)
    finally:
        await anyio.Path(source).unlink(missing_ok=True)
    if outcome.exit_code not in (0, 1):
        return f"ruff failed on HEAD's {rel} (exit {outcome.exit_code})"
    found = parse_ruff(text, ctx.root)
    await anyio.to_thread.run_sync(cache_of(ctx).put, key, BaseResult(findings=found))
    return found


def ruff_config_key(argv: list[str], configs: list[Path]) -> str:
    """The part of a base cache key that is ruff's configuration (the binary included)."""
    tool = Path(argv[0])
    stat = tool.stat() if tool.exists() else None
    return fingerprint(
        "ruff", *argv[1:], str(tool), str(stat.st_mtime_ns if stat else ""), *configs
    )


def ruff_base_key(config: str, rel: str, blob: str) -> str:
    """The cache key of HEAD's findings for one file (`config` from `ruff_config_key`)."""
    return fingerprint(config, rel, blob)


def _lookup(
    ctx: RungContext, head: HeadTree, argv: list[str], configs: list[Path], files: list[str]
) -> tuple[list[Diagnostic], list[tuple[str, str, str]]]:
    # Blocking (git, config files, cache files): runs in a worker thread.
    blobs = head.blobs(files)
    config = ruff_config_key(argv, configs)
    cache = cache_of(ctx)
    found: list[Diagnostic] = []
    missing: list[tuple[str, str, str]] = []
    for rel, blob in sorted(blobs.items()):
        key = ruff_base_key(config, rel, blob)
        hit = cache.get(key)
        if hit is None:
            missing.append((rel, blob, key))
        else:
            found.extend(hit.findings)
    return found, missing


async def ruff_base(
    ctx: RungContext, head: HeadTree, argv: list[str], configs: list[Path], files: list[str]
) -> tuple[BaseResult, bool] | str:
    """HEAD's ruff findings for `files` (those that existed there), from the cache or ruff."""
    found, missing = await anyio.to_thread.run_sync(_lookup, ctx, head, argv, configs, files)
    problems: list[str] = []
    limiter = anyio.CapacityLimiter(_PARALLEL)

    async def run(index: int, rel: str, blob: str, key: str) -> None:
        async with limiter:
            got = await _one(ctx, head, argv, rel, key, index)
        if isinstance(got, str):
            problems.append(got)
        else:
            found.extend(got)

    async with anyio.create_task_group() as tg:
        for index, (rel, blob, key) in enumerate(missing):
            tg.start_soon(run, index, rel, blob, key)
    if problems:
        return problems[0]
    return BaseResult(findings=found), not missing
