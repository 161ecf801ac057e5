"""Timings of each ladder rung, cold and warm, on the sample project and on a real PyPI project.

The real project is one of the ladder harness's, at its pinned version
(ladder_harness_projects.py: `pip download --no-binary :all: --no-deps NAME==VER`, the sdist's
sha256 checked where pinned), unpacked into a git repository with its own venv. Each
measurement adds one module-level assignment to one module (a real code change the block
hashes see, on the clean tree), then runs one rung alone; "cold" is the first climb (dmypy
starting, caches empty), "warm" the median of the next `--runs` climbs, each after a new edit.

    .venv/bin/python bench/ladder/ladder_timings.py [--project more-itertools] [--runs 3]
        [--python python3.12] [--out docs/bench-data/X.json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_harness_projects import PROJECTS, prepare

from _report import print_table, run_meta, started, write_json
from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import RUNGS, LadderRequest, run_ladder, stop_type_daemon

# The module each project's edit lands in (affects its importers and their tests).
EDIT_TARGETS = {"sample": "src/calc/arith.py", "more-itertools": "more_itertools/recipes.py"}


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agent-habitat" / "bench" / "ladder"


def _edit(root: Path, rel: str, n: int) -> None:
    """A code edit the block hashes see (issue 24: a comment-only edit is skipped by them,
    so it timed a climb with nothing to do): a new module-level assignment, on the clean
    tree each time, so every climb finds exactly this one changed line."""
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=root, check=True)
    path = root / rel
    text = path.read_text(encoding="utf-8")
    path.write_text(f"{text}\n_habitat_bench_edit_{n} = {n}\n", encoding="utf-8")


async def measure(
    label: str, root: Path, edit: str, runs: int, environ: dict[str, str]
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    edits = 0
    try:
        for rung in RUNGS:
            samples: list[float] = []
            walls: list[float] = []
            last = None
            for _ in range(runs + 1):
                edits += 1
                _edit(root, edit, edits)
                t0 = time.perf_counter()
                result = await run_ladder(
                    root,
                    LadderRequest(rungs=[rung]),
                    bus=InMemoryEventBus(label),
                    environ=environ,
                )
                walls.append(time.perf_counter() - t0)
                last = result.rungs[0]
                samples.append(last.duration_s)
            assert last is not None
            rows.append(
                {
                    "project": label,
                    "rung": rung,
                    "tool": last.tool or "",
                    "state": last.state,
                    "cold_s": samples[0],
                    "warm_s": statistics.median(samples[1:]),
                    "climb_wall_warm_s": statistics.median(walls[1:]),
                    "detail": (last.reason or "; ".join(last.notes))[:70],
                    "diagnostics": len(last.diagnostics),
                }
            )
    finally:
        await stop_type_daemon(root)
    return rows


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    os.environ["HABITAT_HOME"] = tempfile.mkdtemp(prefix="bench-ladder-home-")
    with tempfile.TemporaryDirectory(prefix="bench-ladder-") as tmp:
        sample = build_sample(Path(tmp) / "calc")
        rows = await measure("sample", sample, EDIT_TARGETS["sample"], args.runs, {})
    project = PROJECTS.get(args.project)
    edit = EDIT_TARGETS.get(args.project)
    if project is None or edit is None:
        raise SystemExit(f"no pinned project and edit target for {args.project}: {EDIT_TARGETS}")
    root, python = await anyio.to_thread.run_sync(prepare, project, args.cache, args.python)
    environ = {"HABITAT_LADDER_PYTHON": str(python)}
    try:
        rows += await measure(f"{project.name} {project.version}", root, edit, args.runs, environ)
    finally:
        subprocess.run(["git", "checkout", "-q", "--", "."], cwd=root, check=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", default="more-itertools")
    parser.add_argument("--runs", type=int, default=3, help="warm runs per rung (median)")
    parser.add_argument("--cache", type=Path, default=_cache_dir())
    parser.add_argument("--python", default=shutil.which("python3.12") or sys.executable)
    parser.add_argument("--out", type=Path, help="also write the JSON here (docs/bench-data/)")
    args = parser.parse_args()
    args.cache = args.cache.resolve()
    start = started()
    os.environ.setdefault("COLUMNS", "150")  # a wide table even when piped
    rows = anyio.run(main_async, args)
    print_table(
        f"ladder rung timings (cold = first climb, warm = median of {args.runs})",
        ["project", "rung", "tool", "state", "cold s", "warm s", "climb wall s", "detail"],
        [
            [
                r["project"],
                r["rung"],
                r["tool"],
                r["state"],
                f"{r['cold_s']:.2f}",
                f"{r['warm_s']:.2f}",
                f"{r['climb_wall_warm_s']:.2f}",
                r["detail"],
            ]
            for r in rows
        ],
    )
    path = write_json(
        "ladder_timings", {**run_meta(start), "runs": args.runs, "rows": rows}, args.out
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
