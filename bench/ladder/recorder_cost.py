"""What the dependency recorder costs a test run: the plain suite, the suite with the baseline's
recorder and with this worktree's, interleaved per round, on the real projects of the ladder
harness (issue 22: the recorder's test process cost ~1.5x the plain suite's CPU on rfc3986).

Each run is `python -m pytest -q -p no:cacheprovider` in the project's venv; the recorded ones
add `-p habitat_testdeps` from the side's plugin folder with the variables the ladder sets
(`verify/select/testdeps.py`). CPU is the run's whole process (user + system, the measure the
machine's load moves least); the order of the three is rotated every round. Both recorders run
with one PYTHONHASHSEED per round, so their records can be compared: a round whose two records
differ is counted (a faster recorder that records something else is a defect).

    .venv/bin/python bench/ladder/recorder_cost.py --baseline-src /path/to/old/src
        [--projects rfc3986,mistune] [--rounds 3] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_harness_projects import PROJECTS, prepare, reset

from _report import print_table, write_json

REPO = Path(__file__).resolve().parents[2]
_PLUGIN = Path("agent_habitat/verify/select/testdeps_plugin")
SIDES = ("plain", "before", "after")


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _run(root: Path, python: Path, plugin: Path | None, out: Path, seed: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONHASHSEED"] = str(seed)
    argv = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if plugin is not None:
        packages = [str(root / p) for p in _packages(root)]
        env |= {
            "PYTHONPATH": str(plugin),
            "HABITAT_TESTDEPS_OUT": str(out),
            "HABITAT_TESTDEPS_ROOT": str(root),
            "HABITAT_TESTDEPS_PACKAGES": os.pathsep.join(packages),
        }
        argv += ["-p", "habitat_testdeps"]
    cpu, t0 = _cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=1800)
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu
    last = (done.stdout.strip().splitlines() or [""])[-1]
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "exit": done.returncode, "said": last}


def _packages(root: Path) -> list[str]:
    """The project's package folders (or single module), as the layout names them."""
    for base in (root / "src", root):
        found = [
            p.relative_to(root).as_posix()
            for p in sorted(base.iterdir())
            if p.is_dir() and (p / "__init__.py").is_file() and p.name not in ("tests", "test")
        ]
        if found:
            return found
    return []


def _record(out: Path) -> Any:
    (path,) = out.glob("deps-*.json")
    return json.loads(path.read_text(encoding="utf-8"))


def run_project(name: str, args: argparse.Namespace) -> dict[str, Any]:
    project = PROJECTS[name]
    root, python = prepare(project, args.cache.resolve(), args.python)
    reset(root)
    plugins = {"before": args.baseline_src / _PLUGIN, "after": REPO / "src" / _PLUGIN}
    rounds: list[dict[str, Any]] = []
    for i in range(args.rounds):
        order = SIDES[i % 3 :] + SIDES[: i % 3]
        row: dict[str, Any] = {"order": list(order)}
        records: dict[str, Any] = {}
        with tempfile.TemporaryDirectory(prefix="recorder-cost-") as tmp:
            for side in order:
                out = Path(tmp) / side
                row[side] = _run(root, python, plugins.get(side), out, args.seed + i)
                if side != "plain":
                    records[side] = _record(out)
        row["same_record"] = records["before"] == records["after"]
        rounds.append(row)
        print(
            f"[{name}] {i + 1}/{args.rounds}: "
            + ", ".join(f"{s} {row[s]['cpu_s']:.2f} CPU-s" for s in order)
            + f", records {'same' if row['same_record'] else 'DIFFER'}",
            file=sys.stderr,
            flush=True,
        )
        reset(root)
    return {"project": f"{project.name} {project.version}", "rounds": rounds}


def summary(p: dict[str, Any]) -> list[str]:
    med = statistics.median
    rounds = p["rounds"]

    def cpu(side: str) -> float:
        return float(med(r[side]["cpu_s"] for r in rounds))

    def over(side: str) -> float:
        return float(med(r[side]["cpu_s"] / r["plain"]["cpu_s"] for r in rounds))

    return [
        p["project"],
        str(len(rounds)),
        f"{cpu('plain'):.2f} / {cpu('before'):.2f} / {cpu('after'):.2f}",
        f"{over('before'):.2f} / {over('after'):.2f}",
        f"{med(r['after']['cpu_s'] / r['before']['cpu_s'] for r in rounds):.2f}",
        f"{sum(not r['same_record'] for r in rounds)}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-src", type=Path, required=True)
    parser.add_argument("--projects", default="rfc3986,mistune")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--python", default=shutil.which("python3.12") or sys.executable)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--cache", type=Path, default=cache / "agent-habitat/bench/ladder")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load_before = [round(x, 2) for x in os.getloadavg()]
    results = [run_project(name, args) for name in args.projects.split(",")]
    load_after = [round(x, 2) for x in os.getloadavg()]
    print_table(
        f"the recorder's cost, interleaved; load {load_before} -> {load_after}",
        [
            "project",
            "rounds",
            "median CPU s: plain / before / after",
            "recorded / plain: before / after",
            "after / before",
            "records differ",
        ],
        [summary(p) for p in results],
    )
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    payload = {
        "commit": head.stdout.strip(),
        "baseline": str(args.baseline_src),
        "seed": args.seed,
        "load_before": load_before,
        "load_after": load_after,
        "projects": results,
    }
    print(f"wrote {write_json('recorder_cost', payload, args.out)}")


if __name__ == "__main__":
    main()
