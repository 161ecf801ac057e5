"""`test.scoped` in a warm server on real projects (issue 9): its wall against the full
suite's, through the warm pytest and fresh, on the mutation harness's seeded mutations.

One `Habitat.open` per project, the way the host runs it (warm-up on open: import graph,
the warm pytest), `HABITAT_COALESCE_SECONDS=0`. First `test.full` records the per-test
dependencies selection reads. Then for each mutation (ladder_harness_mutations.py, same
seed and files as ladder_harness.py): `test.scoped` through the warm pytest, `test.scoped`
fresh (`HABITAT_LADDER_WARM_PYTEST=false`, the same selection), `test.full` through the
warm pytest, and the plain full suite (`python -m pytest -q -p no:cacheprovider`, as the
harness times it). Like for like (issue 24), two ratios per mutation, each with its own
verdict against ≤ 40 %: warm scoped / warm full (both rungs, both recording test
dependencies) and fresh scoped / fresh full; the old measure, warm scoped / fresh full, is
kept beside them. A verdict is given only when the 95 % interval of the median ratio is on
one side of the target (`_report.verdict`), else it says 'undecided'. *Parity*: the warm
and the fresh run agree on state, exit code and the failing tests' ids (a warm pytest that
reports otherwise is a defect; messages are not compared, since one that prints an address
or a random choice differs between any two runs).

    .venv/bin/python bench/ladder/ladder_harness_scoped.py [--projects toolz,cachetools]
        [--mutations 20] [--seed 9] [--python python3.12] [--out docs/bench-data/X.json]
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
from ladder_harness_mutations import apply, choose
from ladder_harness_projects import PROJECTS, prepare, reset, source_files

from _report import median_ci, print_table, run_meta, started, verdict, write_json
from agent_habitat.habitat import Habitat
from agent_habitat.trust import ProjectTrust
from agent_habitat.verify import LadderRequest, RungName, stop_type_daemon
from agent_habitat.verify.models import RungResult
from agent_habitat.workspace import Workspace


async def _rung(habitat: Habitat, rung: RungName) -> RungResult:
    runner = habitat.verify
    assert runner is not None
    ticket = await runner.request(LadderRequest(rungs=[rung]), wait=True)
    assert ticket.result is not None, ticket
    assert ticket.result.result is not None, ticket
    (only,) = [r for r in ticket.result.result.rungs if r.rung == rung]
    return only


def _full(root: Path, python: Path, env: dict[str, str]) -> float:
    """The plain full suite, in a session of its own as the rungs' processes are: with the
    kernel's autogroup scheduling (`/proc/sys/kernel/sched_autogroup_enabled`), a process
    left in the bench's session shares one CPU share with it, and under load its wall was
    3–4× the same suite's in a new session (toolz at load 20: 37 s against 9–12 s, the
    same 1.6 s of CPU), which made every fresh-full ratio look better than it was."""
    t0 = time.perf_counter()
    argv = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    try:
        subprocess.run(
            argv,
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            check=False,
            timeout=60,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired:
        pass  # killed at the same limit as the rungs
    return time.perf_counter() - t0


def _failures(r: RungResult) -> list[str]:
    """The failed tests (node ids). Not their messages: a message that prints an object's
    address or a random choice differs between any two runs, fresh or warm."""
    return sorted(d.file or "" for d in r.diagnostics)


async def bench_project(name: str, args: argparse.Namespace) -> dict[str, Any]:
    project = PROJECTS[name]
    root, python = prepare(project, args.cache, args.python)
    reset(root)
    home = Path(tempfile.mkdtemp(prefix=f"scoped-{name}-", dir=args.cache))
    os.environ.update(project.pytest_env)
    os.environ["HABITAT_HOME"] = str(home)
    os.environ["HABITAT_LADDER_PYTHON"] = str(python)
    os.environ["HABITAT_COALESCE_SECONDS"] = "0"
    os.environ["HABITAT_LADDER_TIMEOUT_S"] = "60"  # a mutation can make a loop endless
    os.environ.pop("PYTHONPATH", None)
    env = dict(os.environ)
    files = source_files(root, project.sources)
    rows: list[dict[str, Any]] = []
    ProjectTrust().grant_sync(root, "verb")  # the bench made it: the warm-up may run it
    async with Habitat.open(Workspace.for_project(root), project=root) as habitat:
        warm = habitat.verifier.warmup
        assert warm is not None
        await warm.wait()
        print(f"[{name}] warm-up: {warm.items.get('pytest')}", file=sys.stderr, flush=True)
        recorded = await _rung(habitat, "test.full")
        print(f"[{name}] test.full {recorded.duration_s:.2f} s", file=sys.stderr, flush=True)
        try:
            for i, m in enumerate(choose(root, files, args.mutations, args.seed)):
                reset(root)
                apply(root, m)
                os.environ.pop("HABITAT_LADDER_WARM_PYTEST", None)
                hot = await _rung(habitat, "test.scoped")
                os.environ["HABITAT_LADDER_WARM_PYTEST"] = "false"
                cold = await _rung(habitat, "test.scoped")
                os.environ.pop("HABITAT_LADDER_WARM_PYTEST", None)
                full_warm = await _rung(habitat, "test.full")
                full = _full(root, python, env)
                warm_note = next((n for n in hot.notes if "pytest" in n), "")
                row = {
                    "mutation": m.label,
                    "state": hot.state,
                    "warm_s": hot.duration_s,
                    "fresh_s": cold.duration_s,
                    "full_s": full,
                    "full_warm_s": full_warm.duration_s,
                    "full_warm_state": full_warm.state,
                    "forked": "forked from the warm pytest" in warm_note,
                    "parity": (hot.state, hot.exit_code, _failures(hot))
                    == (cold.state, cold.exit_code, _failures(cold)),
                }
                rows.append(row)
                print(
                    f"[{name}] {i + 1:2}/{args.mutations} {m.label}: {hot.state} warm "
                    f"{hot.duration_s:.2f} s, fresh {cold.duration_s:.2f} s, full warm "
                    f"{full_warm.duration_s:.2f} s, full fresh {full:.2f} s"
                    f"{'' if row['parity'] else ' PARITY-BROKEN'}"
                    f"{'' if row['forked'] or hot.state == 'skipped' else ' NOT-FORKED'}",
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            reset(root)
    await stop_type_daemon(root)
    shutil.rmtree(home, ignore_errors=True)
    # A rung killed at the limit (a mutation that makes a loop endless) has no ratio.
    ran = [
        r
        for r in rows
        if r["state"] in ("green", "red") and r["full_warm_state"] in ("green", "red")
    ]
    med = statistics.median
    return {
        "project": f"{project.name} {project.version}",
        "mutations": rows,
        "ran": len(ran),
        "warm_median_s": med([r["warm_s"] for r in ran]) if ran else 0.0,
        "fresh_median_s": med([r["fresh_s"] for r in ran]) if ran else 0.0,
        "full_warm_median_s": med([r["full_warm_s"] for r in ran]) if ran else 0.0,
        "full_median_s": med([r["full_s"] for r in ran]) if ran else 0.0,
        "ratios": {
            key: _ratios([r[num] / r[den] for r in ran])
            for key, num, den in (
                ("warm_warm", "warm_s", "full_warm_s"),
                ("fresh_fresh", "fresh_s", "full_s"),
                ("warm_fresh", "warm_s", "full_s"),  # the old measure, not like for like
            )
        },
        "forked": sum(r["forked"] for r in ran),
        "parity": sum(r["parity"] for r in rows),
    }


TARGET = 0.40


def _ratios(values: list[float]) -> dict[str, Any]:
    """A ratio's median, its 95 % interval and the verdict that interval allows."""
    if not values:
        return {"n": 0, "median": 0.0, "ci": [0.0, 0.0], "verdict": "no samples"}
    low, high = median_ci(values)
    return {
        "n": len(values),
        "median": statistics.median(values),
        "ci": [low, high],
        "verdict": verdict(values, TARGET),
    }


def rows_of(results: list[dict[str, Any]]) -> list[list[str]]:
    """The table's rows (bench/tables.py makes the docs' table from the JSON with this)."""
    rows = []
    for r in results:
        if not r["ran"]:
            rows.append([r["project"], "0", "no mutation ran test.scoped", "", "", "", "", ""])
            continue

        def ratio(key: str, r: dict[str, Any] = r) -> str:
            x = r["ratios"][key]
            return f"{x['median']:.0%} ({x['ci'][0]:.0%}–{x['ci'][1]:.0%}) {x['verdict']}"

        rows.append(
            [
                r["project"],
                f"{r['ran']} of {len(r['mutations'])}",
                f"{r['warm_median_s']:.2f} / {r['fresh_median_s']:.2f}",
                f"{r['full_warm_median_s']:.2f} / {r['full_median_s']:.2f}",
                ratio("warm_warm"),
                ratio("fresh_fresh"),
                f"{r['ratios']['warm_fresh']['median']:.0%}",
                f"{r['forked']} of {r['ran']}, {r['parity']} of {len(r['mutations'])}",
            ]
        )
    return rows


HEAD = [
    "project",
    "ran",
    "scoped median s: warm / fresh",
    "full median s: warm / fresh",
    "warm / warm, median (95 % CI), ≤ 40 %",
    "fresh / fresh, median (95 % CI), ≤ 40 %",
    "old: warm / fresh full",
    "forked, warm = fresh",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", default="toolz,cachetools")
    parser.add_argument("--mutations", type=int, default=20)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--python", default=shutil.which("python3.12") or sys.executable)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--cache", type=Path, default=cache / "agent-habitat/bench/ladder")
    parser.add_argument("--out", type=Path, help="also write the JSON here (docs/bench-data/)")
    args = parser.parse_args()
    args.cache = args.cache.resolve()
    start = started()
    results = [anyio.run(bench_project, name, args) for name in args.projects.split(",")]
    print_table("test.scoped against the full suite, warm and fresh", HEAD, rows_of(results))
    payload = {
        **run_meta(start),
        "seed": args.seed,
        "mutations_per_project": args.mutations,
        "python": args.python,
        "projects": results,
    }
    print(write_json("ladder_harness_scoped", payload, args.out))


if __name__ == "__main__":
    main()
