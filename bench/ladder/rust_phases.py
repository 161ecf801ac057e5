"""Where a Rust verdict's seconds went, from the spool files its climb left (issue 27).

Every process a rung runs writes a spool file in the workspace's state folder, named after
the climb and the rung (`verify-<id>.test.scoped.head-build.out`), made when the process
starts (its birth time, `stat -c %W`; else its `.keeper` companion's time, which habitats
of before 4823877 made beside every spool) and last written as its output ends. So each
process's start and end, relative to the verify's start, come back without the product
timing anything for the bench. `cargo_build_s` reads cargo's own "Finished …
in N s" line, which splits a `cargo test` into its build and its run (the rest)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

__all__ = ["PHASES", "cargo_build_s", "verdict_phases"]

PHASES = {
    "diagnose.files.metadata.out": "cargo metadata",
    "diagnose.files.out": "clippy",
    "diagnose.files.base.out": "HEAD clippy",
    "diagnose.files.lib.out": "lib check",
    "diagnose.files.lib.base.out": "HEAD lib check",
    "test.scoped.lib.out": "lib check (tests)",
    "test.scoped.lib.base.out": "HEAD lib check (tests)",
    "test.scoped.built.out": "HEAD test build (errors)",
    "compile.project.out": "check",
    "test.scoped.metadata.out": "cargo metadata (tests)",
    "test.scoped.out": "cargo test",
    "test.scoped.head-build.out": "HEAD test build",
    "test.scoped.head-tests.out": "HEAD tests",
    "test.scoped.head-ahead.out": "HEAD tests ahead",
    "test.scoped.head-ahead1.out": "HEAD tests ahead 2",
}
"""A spool file's suffix after the climb's id → the phase it is."""

_FINISHED = re.compile(r"Finished `\w+` profile .* in (\d+(?:\.\d+)?)(m?s)\b")


def cargo_build_s(text: str) -> float | None:
    """The build's seconds from cargo's "Finished" line (the first), None without one."""
    m = _FINISHED.search(text)
    if m is None:
        return None
    value = float(m[1])
    return value / 1000 if m[2] == "ms" else value


def _born(paths: list[Path]) -> dict[Path, float]:
    """Each file's birth time where the file system keeps one (GNU stat's `%W`)."""
    if not paths:
        return {}
    try:
        out = subprocess.run(
            ["stat", "-c", "%.9W", *map(str, paths)], capture_output=True, text=True, check=False
        ).stdout.split()
    except OSError:
        return {}
    return {p: float(t) for p, t in zip(paths, out, strict=False) if t not in ("0", "-", "?")}


def verdict_phases(home: Path, since: float) -> dict[str, dict[str, float | None]]:
    """Per phase of the verify that started at `since` (`time.time()`): its start and its
    length in seconds from then, and for a cargo test its build's seconds."""
    spools = [
        p
        for p in home.glob("workspaces/*/spool/verify-*.out")
        if not p.name.startswith("verify-warm-")
    ]
    born = _born(spools)
    out: dict[str, dict[str, float | None]] = {}
    for spool in spools:
        keeper = spool.with_name(spool.name + ".keeper")
        try:
            ended = spool.stat().st_mtime
            began = born.get(spool) or keeper.stat().st_mtime
        except FileNotFoundError:
            continue
        if began < since:
            continue
        suffix = spool.name.split(".", 1)[1]
        name = PHASES.get(suffix, suffix)
        text = spool.read_text(encoding="utf-8", errors="replace")
        out[name] = {
            "start_s": round(began - since, 2),
            "length_s": round(ended - began, 2),
            "build_s": cargo_build_s(text) if "test" in suffix else None,
        }
    return dict(sorted(out.items(), key=lambda kv: kv[1]["start_s"] or 0.0))
