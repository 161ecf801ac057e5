"""The lint baseline built ahead of time: HEAD's ruff findings for every Python file of the
project, in one ruff run over HEAD's export, stored under the same cache keys
`diagnose.files` looks up (lint.py), so its first comparison with HEAD costs nothing.

Running ruff on the export instead of feeding each file on stdin (as `ruff_base` does) is
the same check only when ruff resolves the same configuration there: every configuration
that applies must sit inside the project and be unchanged since HEAD. Files whose
configuration does not meet that are left out (their baseline is built on first use).
"""

from __future__ import annotations

import subprocess
from collections import defaultdict
from pathlib import Path

import anyio
import anyio.to_thread

from ...git_env import git_env
from ..baseline import BaseResult
from ..command import take_report
from ..environments import ProjectEnv
from ..head import HeadTree
from ..models import Diagnostic
from ..parsers import parse_ruff
from .compare import cache_of
from .context import RungContext
from .lint import RUNG, ruff_argv, ruff_base_key, ruff_config_key, ruff_configured

__all__ = ["warm_lint_baseline"]

_BATCH = 400  # files per ruff run: keeps argv far below the kernel's limit


def _python_files_at_head(root: Path, head: str) -> list[str]:
    # Run in the project's folder, git lists that folder's files relative to it.
    done = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "-z", head],
        env=git_env(),
        cwd=root,
        capture_output=True,
        check=False,
        timeout=60,
    )
    if done.returncode != 0:
        raise OSError(f"git ls-tree failed: {done.stderr.decode(errors='replace').strip()}")
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted(n for n in names if n.endswith((".py", ".pyi")))


def _groups(ctx: RungContext, files: list[str]) -> tuple[dict[tuple[Path, ...], list[str]], int]:
    """Files by the ruff configurations that apply to them (as `diagnose.files` computes
    them for a one-file change), only where the export resolves the same ones; and how many
    files were left out."""
    by_folder: dict[str, list[str]] = defaultdict(list)
    for rel in files:
        by_folder[rel.rsplit("/", 1)[0] if "/" in rel else ""].append(rel)
    touched = set(ctx.touched)
    out: dict[tuple[Path, ...], list[str]] = defaultdict(list)
    left_out = 0
    for folder_files in by_folder.values():
        configs = tuple(ruff_configured(ctx.root, folder_files[:1]))
        inside = all(c.is_relative_to(ctx.root) for c in configs)
        if inside and not any(c.relative_to(ctx.root).as_posix() in touched for c in configs):
            out[configs].extend(folder_files)
        else:
            left_out += len(folder_files)
    return out, left_out


async def _one_group(
    ctx: RungContext,
    head: HeadTree,
    export: Path,
    argv: list[str],
    configs: list[Path],
    files: list[str],
    index: int,
) -> int:
    blobs = await anyio.to_thread.run_sync(head.blobs, files)
    config = await anyio.to_thread.run_sync(ruff_config_key, argv, configs)
    found: dict[str, list[Diagnostic]] = {rel: [] for rel in blobs}
    for start in range(0, len(files), _BATCH):
        batch = [f for f in files[start : start + _BATCH] if f in blobs]
        report = ctx.spool(RUNG, f".warm{index}-{start}.json")
        outcome = await ctx.run(
            RUNG,
            [*argv, "--output-file", str(report), *batch],
            suffix=f".warm{index}-{start}.out",
            cwd=export,
            reap_leftovers=False,  # ruff starts no processes (see diagnose.py)
        )
        text = await take_report(report)
        if outcome.exit_code not in (0, 1):
            raise OSError(f"ruff failed on HEAD's export (exit {outcome.exit_code})")
        for diag in parse_ruff(text, export):
            if diag.file in found:
                found[diag.file].append(diag)
    cache = cache_of(ctx)

    def store() -> None:
        for rel, diags in found.items():
            cache.put(ruff_base_key(config, rel, blobs[rel]), BaseResult(findings=diags))

    await anyio.to_thread.run_sync(store)
    return len(found)


async def warm_lint_baseline(ctx: RungContext, env: ProjectEnv, head: HeadTree) -> str:
    """Fill the base cache for the project's Python files at HEAD; what was done."""
    files = await anyio.to_thread.run_sync(_python_files_at_head, ctx.root, head.head)
    groups, left_out = await anyio.to_thread.run_sync(_groups, ctx, files)
    if not groups:
        return f"nothing to build ({left_out} files whose ruff configuration is not at HEAD)"
    export = await anyio.to_thread.run_sync(head.export)
    done = 0
    for index, (configs, members) in enumerate(sorted(groups.items())):
        argv = ruff_argv(ctx, env, list(configs))
        done += await _one_group(ctx, head, export, argv, list(configs), members, index)
    also = f"; {left_out} left for first use" if left_out else ""
    return f"HEAD's ruff findings for {done} files{also}"
