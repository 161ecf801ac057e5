"""The steady state through a warm host (issue 22): edit → verdict once the host has been up,
its warm-up done and two edits verified, next to `pytest --testmon` (after its own recording
run) and the plain full suite on the same tree; where the verdict's wall goes, phase by phase.

Per project (ladder_harness_projects.py) and round, for each side (a baseline habitat given
as its source folder, and the measured one; their order swapped every round): a fresh state
folder, the host started on the clean project (`habitat host start --project`, as an MCP
client's bridge starts it), two seeded one-line edits verified and not measured, the
warm-up waited for (`habitat status --json` lists no step pending or running), then
`--edits` seeded edits (ladder_harness_mutations.py), each on the clean tree, each verified
with `habitat verify --json` and then, on the same tree, the plain full suite (`python -m
pytest -q -p no:cacheprovider`) and `pytest --testmon` against its recording of the clean
tree; then `--comments` comment-only edits (a new comment line at the top of the first
source file), each verified. Both sides get the same edits in a round.

Per verify: the CLI's wall (what a person waits), the host's own (`timing.wall_s`), its
parts (`timing`: the rungs, prepare, queue, coalesce, baseline) and each rung's duration.
Truth: a miss is not red where the full suite has a failure the clean tree does not; a
false red is red where the suite found nothing new and no rung before the tests named a
new finding.

    .venv/bin/python bench/ladder/ladder_steady.py --baseline-src BASE/src [--after-src SRC]
        [--projects parse,webcolors,toolz] [--rounds 2] [--edits 4] [--comments 2]
        [--cache DIR] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_bytecode import compile_habitat
from ladder_first_verify import HABITAT, _full, _home, _json, _truth, _verify
from ladder_harness import Runner
from ladder_harness_mutations import apply, choose
from ladder_harness_projects import PROJECTS, prepare, reset, source_files

from _report import print_table, write_json

REPO = Path(__file__).resolve().parents[2]
HEAD = [
    "project",
    "edit",
    "side",
    "n",
    "verify s (CLI / host)",
    "full s",
    "testmon s",
    "host's parts s: rungs / prepare / other",
    "rungs s: lint / types / tests",
    "misses / false reds",
]
_RUNGS = ("diagnose.files", "compile.project", "test.scoped")


def _wait_warm(run: Runner, env: dict[str, str], bound_s: float = 600.0) -> float:
    """Until `habitat status` lists no warm-up under way nor a step in progress or pending
    (bounded)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < bound_s:
        _, text = run._timed([str(HABITAT), "status", "--json"], env)
        lines = _json(text).get("warm") or []
        # warm_status.warm_lines: "warming up (pid N)", a step "in progress" or "pending"
        busy = ("warming up", "in progress", "pending", "running")
        if lines and not any(w in line for line in lines for w in busy):
            break
        time.sleep(1.0)
    return time.monotonic() - t0


def _testmon(run: Runner, env: dict[str, str]) -> float:
    db = run.home / "run.testmondata"
    shutil.copyfile(run.testmon_db, db)
    argv = [str(run.python), "-m", "pytest", "-q", "--testmon"]
    wall, _ = run._timed(argv, {**env, "TESTMON_DATAFILE": str(db)})
    return round(wall, 3)


def _comment(root: Path, rel: str, i: int, side: str) -> None:
    path = root / rel
    path.write_text(f"# bench: comment {i} {side}\n{path.read_text('utf-8')}", encoding="utf-8")


def _side(run: Runner, side: str, env: dict[str, str], plan: dict[str, Any]) -> dict[str, Any]:
    reset(run.root)
    run._timed([str(HABITAT), "host", "start", "--project", str(run.root)], env)
    out: dict[str, Any] = {"edits": [], "comments": []}
    try:
        for m in plan["warm"]:
            reset(run.root)
            apply(run.root, m)
            _verify(run, env)
        reset(run.root)
        out["warm_wait_s"] = round(_wait_warm(run, env), 1)
        for m in plan["edits"]:
            reset(run.root)
            apply(run.root, m)
            got = _verify(run, env)
            full = _full(run, plan["base_failed"])
            _truth(got, full)
            got["testmon_s"] = _testmon(run, env)
            out["edits"].append({"mutation": m.label, "verify": got, "full": full})
        for i in range(plan["comments"]):
            reset(run.root)
            _comment(run.root, plan["files"][0], i, side)
            out["comments"].append(_verify(run, env))
    finally:
        run._timed([str(HABITAT), "host", "stop", "--project", str(run.root)], env)
        reset(run.root)
    return out


def run_project(name: str, args: argparse.Namespace) -> dict[str, Any]:
    project = PROJECTS[name]
    root, python = prepare(project, args.cache.resolve(), args.python)
    reset(root)
    run = Runner(project, root, python, _home("st"))
    _, base_failed, total = run.full()
    run.testmon(record=True)  # testmon's own recording run, on the clean tree
    reset(root)
    files = source_files(root, project.sources)
    per_round = 2 + args.edits
    pool = choose(root, files, per_round * args.rounds, args.seed)
    after = {"PYTHONPATH": str(args.after_src)} if args.after_src else {}
    sides = {"before": {"PYTHONPATH": str(args.baseline_src)}, "after": after}
    rounds: list[dict[str, Any]] = []
    try:
        for i in range(args.rounds):
            edits = pool[per_round * i : per_round * (i + 1)]
            plan = {
                "warm": edits[:2],
                "edits": edits[2:],
                "comments": args.comments,
                "files": files,
                "base_failed": base_failed,
            }
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            row: dict[str, Any] = {"round": i + 1, "order": order}
            for side in order:
                home = _home(side[0])
                env = {**run.env, **sides[side], "HABITAT_HOME": str(home)}
                try:
                    row[side] = _side(run, side, env, plan)
                finally:
                    shutil.rmtree(home, ignore_errors=True)
                said = ", ".join(
                    f"{e['verify']['wall_s']:.2f}s {e['verify']['state']} (full "
                    f"{e['full']['wall_s']:.2f}, testmon {e['verify']['testmon_s']:.2f})"
                    for e in row[side]["edits"]
                )
                comments = ", ".join(f"{c['wall_s']:.2f}s" for c in row[side]["comments"])
                print(
                    f"[{name}] round {i + 1} {side}: {said}; comments {comments}; load "
                    f"{os.getloadavg()[0]:.1f}",
                    file=sys.stderr,
                    flush=True,
                )
            rounds.append(row)
    finally:
        reset(root)
        shutil.rmtree(run.home, ignore_errors=True)
    return {"project": f"{project.name} {project.version}", "tests": total, "rounds": rounds}


def _parts(got: list[dict[str, Any]]) -> tuple[str, str]:
    med = statistics.median
    timing = [g.get("timing") or {} for g in got]
    rungs = [t.get("rungs_s") or 0.0 for t in timing]
    prepare_s = [t.get("prepare_s") or 0.0 for t in timing]
    other = [
        (t.get("wall_s") or 0.0) - (t.get("rungs_s") or 0.0) - (t.get("prepare_s") or 0.0)
        for t in timing
    ]
    each = [med(g["rungs"].get(r, ["", 0.0])[1] for g in got) for r in _RUNGS]
    return (
        # `other` is the wall less the parts, each rounded to the millisecond: never below 0
        f"{med(rungs):.2f} / {med(prepare_s):.2f} / {max(0.0, med(other)):.2f}",
        " / ".join(f"{v:.2f}" for v in each),
    )


def rows(p: dict[str, Any]) -> list[list[str]]:
    med = statistics.median
    out: list[list[str]] = []
    for side in ("before", "after"):
        edits = [e for r in p["rounds"] for e in r[side]["edits"]]
        got = [e["verify"] for e in edits]
        if got:
            rungs, each = _parts(got)
            host = [(g.get("timing") or {}).get("wall_s") or 0.0 for g in got]
            out.append(
                [
                    p["project"],
                    "one-line edit",
                    side,
                    str(len(got)),
                    f"{med(g['wall_s'] for g in got):.2f} / {med(host):.2f}",
                    f"{med(e['full']['wall_s'] for e in edits):.2f}",
                    f"{med(g['testmon_s'] for g in got):.2f}",
                    rungs,
                    each,
                    f"{sum(g['miss'] for g in got)} / {sum(g['false_red'] for g in got)}",
                ]
            )
        comments = [c for r in p["rounds"] for c in r[side]["comments"]]
        if comments:
            rungs, each = _parts(comments)
            host = [(c.get("timing") or {}).get("wall_s") or 0.0 for c in comments]
            states = ", ".join(sorted({c["state"] for c in comments}))
            out.append(
                [
                    p["project"],
                    "comment only",
                    side,
                    str(len(comments)),
                    f"{med(c['wall_s'] for c in comments):.2f} / {med(host):.2f}",
                    "",
                    "",
                    rungs,
                    each,
                    states,
                ]
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-src", type=Path, required=True)
    parser.add_argument("--after-src", type=Path, help="default: this venv's habitat")
    parser.add_argument("--projects", default="parse,webcolors,toolz")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--edits", type=int, default=4)
    parser.add_argument("--comments", type=int, default=2)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--python", default=shutil.which("python3.12") or sys.executable)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--cache", type=Path, default=cache / "agent-habitat/bench/ladder")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    args.baseline_src = args.baseline_src.resolve()
    args.after_src = args.after_src.resolve() if args.after_src else None
    # SIGTERM (a stopped run) unwinds like Ctrl-C: the hosts stopped, the copies reset.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    compiled = compile_habitat(HABITAT)
    for src in filter(None, (args.baseline_src, args.after_src)):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
    load_before = [round(x, 2) for x in os.getloadavg()]
    results = [run_project(name, args) for name in args.projects.split(",")]
    load_after = [round(x, 2) for x in os.getloadavg()]
    print_table(
        f"steady state through a warm host (3rd edit on), {args.rounds} rounds x {args.edits} "
        f"edits, seed {args.seed}; load {load_before} -> {load_after}",
        HEAD,
        [row for p in results for row in rows(p)],
    )
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    payload = {
        "commit": head.stdout.strip(),
        "baseline_src": str(args.baseline_src),
        "after_src": str(args.after_src or compiled),
        "seed": args.seed,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_before": load_before,
        "load_after": load_after,
        "projects": results,
    }
    print(f"wrote {write_json('ladder_steady', payload, args.out)}")


if __name__ == "__main__":
    main()
