"""Timings of each ladder rung, cold and warm, on the sample project and on a real PyPI project.

The real project comes from its sdist (`pip download --no-binary :all: --no-deps NAME`) into
a cache folder, unpacked into a fresh git repository, with its own venv (the project
installed editable, plus pytest). Each measurement edits one module (a harmless comment),
then runs one rung alone; "cold" is the first climb (dmypy starting, caches empty), "warm"
the median of the next `--runs` climbs, each after a new edit.

    .venv/bin/python bench/ladder/ladder_timings.py [--project more-itertools] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import print_table, write_json
from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import RUNGS, LadderRequest, run_ladder, stop_type_daemon

# The module each project's edit lands in (affects its importers and their tests).
EDIT_TARGETS = {"sample": "src/calc/arith.py", "more-itertools": "more_itertools/recipes.py"}


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agent-habitat" / "bench"


def _run(argv: list[str], cwd: Path | None = None) -> None:
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)


def _git_init(root: Path) -> None:
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    _run([*git, "init", "-q"], root)
    (root / ".gitignore").write_text("__pycache__/\n.mypy_cache/\n.pytest_cache/\n")
    _run([*git, "add", "-A"], root)
    _run([*git, "commit", "-qm", "sdist"], root)


def prepare_real(name: str, cache: Path) -> tuple[Path, Path, str]:
    """(project root, its interpreter, sdist file name) — downloaded and installed once."""
    sdists = cache / "sdist"
    sdists.mkdir(parents=True, exist_ok=True)
    found = sorted(sdists.glob(f"{name.replace('-', '_')}-*.tar.gz"))
    if not found:
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-binary",
                ":all:",
                "--no-deps",
                name,
                "-d",
                str(sdists),
            ]
        )
        found = sorted(sdists.glob(f"{name.replace('-', '_')}-*.tar.gz"))
    sdist = found[-1]
    work = cache / "work" / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with tarfile.open(sdist) as tar:
        tar.extractall(work, filter="data")
    (root,) = [p for p in work.iterdir() if p.is_dir()]
    _git_init(root)
    venv = cache / "venvs" / sdist.name.removesuffix(".tar.gz")
    python = venv / "bin" / "python"
    module = name.replace("-", "_")
    probe = (
        subprocess.run(
            [str(python), "-c", f"import pytest, {module}"], check=False, capture_output=True
        )
        if python.exists()
        else None
    )
    if probe is None or probe.returncode != 0:
        _run([sys.executable, "-m", "venv", "--clear", str(venv)])
        _run([str(python), "-m", "pip", "install", "--quiet", "-e", str(root), "pytest"])
    return root, python, sdist.name


def _edit(root: Path, rel: str, n: int) -> None:
    path = root / rel
    path.write_text(path.read_text(encoding="utf-8") + f"\n# bench edit {n}\n", encoding="utf-8")


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
    root, python, sdist = await anyio.to_thread.run_sync(prepare_real, args.project, args.cache)
    edit = EDIT_TARGETS.get(args.project)
    if edit is None:
        raise SystemExit(f"no edit target known for {args.project}; add it to EDIT_TARGETS")
    environ = {"HABITAT_LADDER_PYTHON": str(python)}
    rows += await measure(sdist.removesuffix(".tar.gz"), root, edit, args.runs, environ)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", default="more-itertools")
    parser.add_argument("--runs", type=int, default=3, help="warm runs per rung (median)")
    parser.add_argument("--cache", type=Path, default=_cache_dir())
    args = parser.parse_args()
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
    path = write_json("ladder_timings", {"runs": args.runs, "rows": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
