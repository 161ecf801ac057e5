"""One-shot `habitat verify` before and after a change, interleaved, next to the full suite
(issue 22: one-shot ≤ the full suite's wall + 1 s).

The flow of a script, a hook or an agent's shell with no terminal: no host, a fresh state
folder per side, every edit verified with `habitat verify --json --no-host` (policy
standard), no run by hand first. Per project (ladder_harness_projects.py) and seeded
mutation (ladder_harness_mutations.py), on a clean copy: the baseline CLI and this
worktree's CLI (their order swapped every mutation), then the plain full suite. Both sides'
own Python sources are byte-compiled first, as installing a wheel does
(ladder_bytecode.py); the project's sources are left as they are for all three.

Truth: a side misses when the full suite has a failure the baseline did not and its verify
is not red; the table also counts the mutations whose two verdicts differ.

`--flow` says whose verify it is: `steady` (above: a side's state folder kept across a
project's edits, reported from the second edit), `first` (every verify in a fresh state
folder: a user's first project ever, every edit reported), or `new-project` (a side's state
folder kept across the run, its workspaces removed before each verify: a project the user
opens after others, so only what the habitat shares between workspaces is warm; reported
from the run's second edit). Each verify's wall is to its exit; `verdict_s` is when its
verdict (the JSON's last line) was out.

    .venv/bin/python bench/ladder/ladder_oneshot.py --baseline /path/to/base-venv/bin/habitat
        [--projects webcolors,toolz] [--mutations 8] [--seed YYYYMMDD] [--flow steady]
        [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_bytecode import compile_habitat
from ladder_harness import Runner
from ladder_harness_mutations import apply, choose
from ladder_harness_projects import PROJECTS, prepare, reset, source_files

from _report import print_table, write_json

REPO = Path(__file__).resolve().parents[2]
AFTER = Path(sys.executable).parent / "habitat"
HOMES = ("before", "after")


def _cpu() -> float:
    """CPU seconds of this process's waited-for descendants so far: a verify's whole tree
    (its rungs' processes are reaped by it, their forks by them), the measure the machine's
    load moves least."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(run: Runner, argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall to the exit, wall to the verdict's last line, output), bounded as
    `Runner._timed` is: stopped after `run.limit_s`."""
    t0 = time.perf_counter()
    verdict: list[float] = []
    lines: list[str] = []
    with subprocess.Popen(
        argv,
        cwd=run.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    ) as proc:
        timer = threading.Timer(run.limit_s, os.killpg, args=(proc.pid, signal.SIGTERM))
        timer.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line)
                if line.rstrip("\n") == "}" and not verdict:  # `--json`'s indent=2 ends so
                    verdict.append(time.perf_counter() - t0)
            proc.wait()
        finally:
            timer.cancel()
    wall = time.perf_counter() - t0
    return wall, verdict[0] if verdict else wall, "".join(lines)


def verify(run: Runner, habitat: Path, home: Path) -> tuple[float, float, dict[str, Any]]:
    env = {**run.env, "HABITAT_HOME": str(home)}
    argv = [str(habitat), "verify", "--json", "--no-host", "--policy", "standard"]
    cpu = _cpu()
    wall, verdict, text = _timed(run, argv, env)
    cpu = _cpu() - cpu
    start = text.find("{")
    try:
        result = json.loads(text[start:]) if start >= 0 else {"error": text[-500:]}
    except ValueError:
        result = {"error": text[-500:]}
    result["_cpu_s"] = cpu
    return wall, verdict, result


def _fresh(home: Path, flow: str) -> None:
    """The state a side's next verify starts from (`--flow`)."""
    if flow == "first":
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(mode=0o700)
    elif flow == "new-project":
        shutil.rmtree(home / "workspaces", ignore_errors=True)


def _side(wall: float, verdict: float, result: dict[str, Any], caught: bool) -> dict[str, Any]:
    state = result.get("state", "error")
    return {
        "wall_s": round(wall, 3),
        "verdict_s": round(verdict, 3),
        "cpu_s": round(result.get("_cpu_s", 0.0), 3),
        "state": state,
        "rungs": {
            r["rung"]: [r["state"], r["duration_s"], r.get("tool")] for r in result.get("rungs", [])
        },
        "timing": result.get("timing"),
        "miss": caught and state != "red",
    }


def run_project(
    name: str, args: argparse.Namespace, homes: dict[str, Path] | None = None
) -> dict[str, Any]:
    project = PROJECTS[name]
    root, python = prepare(project, args.cache.resolve(), args.python)
    reset(root)
    kept = homes is not None
    homes = homes or {
        side: Path(tempfile.mkdtemp(prefix=f"lo-{side[0]}-{name[:6]}-", dir="/tmp"))
        for side in ("before", "after")
    }
    run = Runner(project, root, python, homes["after"])
    base_wall, base_failed, total = run.full()
    run.limit_s = max(90.0, 8 * base_wall)
    files = source_files(root, project.sources)
    clis = {"before": args.baseline, "after": args.after}
    rows: list[dict[str, Any]] = []
    try:
        for i, m in enumerate(choose(root, files, args.mutations, args.seed)):
            order = ("before", "after") if i % 2 == 0 else ("after", "before")
            reset(root)
            apply(root, m)
            got = {}
            for side in order:
                _fresh(homes[side], args.flow)
                got[side] = verify(run, clis[side], homes[side])
            cpu = _cpu()
            full_wall, full_failed, _ = run.full()
            full_cpu = _cpu() - cpu
            caught = bool(full_failed - base_failed)
            row: dict[str, Any] = {
                "mutation": m.label,
                "order": list(order),
                "full_s": round(full_wall, 3),
                "full_cpu_s": round(full_cpu, 3),
                "full_caught": caught,
                **{side: _side(*got[side], caught) for side in order},
            }
            rows.append(row)
            said = ", ".join(f"{s} {row[s]['wall_s']:.2f}s {row[s]['state']}" for s in order)
            print(
                f"[{name}] {i + 1}/{args.mutations} {m.label}: {said}, "
                f"full {full_wall:.2f}s {'caught' if caught else 'green'}",
                file=sys.stderr,
                flush=True,
            )
    finally:
        reset(root)
        for home in homes.values() if not kept else ():
            shutil.rmtree(home, ignore_errors=True)
    return {"project": f"{project.name} {project.version}", "tests": total, "mutations": rows}


def summary(p: dict[str, Any], flow: str = "steady") -> list[str]:
    # From the second edit (as the ladder harness reports), but every edit of `first`
    # (each one a first verify) and of a project after the first under `new-project`.
    skip = 0 if flow == "first" or (flow == "new-project" and not p.get("opens_run")) else 1
    rows = p["mutations"][skip:]
    if not rows:
        return [p["project"], "0", *["-"] * 8]
    med = statistics.median

    def walls(side: str) -> list[float]:
        return [r[side]["wall_s"] for r in rows]

    ratios = [r["after"]["wall_s"] / r["before"]["wall_s"] for r in rows]
    over = [r["after"]["wall_s"] - r["full_s"] for r in rows]
    over_before = [r["before"]["wall_s"] - r["full_s"] for r in rows]

    def cpus() -> str:
        if any("cpu_s" not in r["after"] for r in rows):
            return "-"  # a run from before it was measured
        sides = [f"{med(r[side]['cpu_s'] for r in rows):.2f}" for side in ("before", "after")]
        return " / ".join([*sides, f"{med(r['full_cpu_s'] for r in rows):.2f}"])

    def verdicts(side: str) -> str:
        if any("verdict_s" not in r[side] for r in rows):
            return "-"  # a run from before it was measured
        return f"{med(r[side]['verdict_s'] for r in rows):.2f}"

    return [
        p["project"],
        str(len(rows)),
        f"{med(walls('before')):.2f} / {med(walls('after')):.2f} / "
        f"{med(r['full_s'] for r in rows):.2f}",
        f"{verdicts('before')} / {verdicts('after')}",
        cpus(),
        f"{med(ratios):.2f} (p10 {sorted(ratios)[len(ratios) // 10]:.2f}, max {max(ratios):.2f})",
        f"{med(over_before):+.2f} / {med(over):+.2f}",
        f"{sum(r['before']['miss'] for r in rows)} / {sum(r['after']['miss'] for r in rows)}",
        str(sum(r["before"]["state"] != r["after"]["state"] for r in rows)),
        f"{sum(o <= 1.0 for o in over)}/{len(rows)}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the baseline's habitat")
    parser.add_argument("--projects", default="webcolors,toolz")
    parser.add_argument("--mutations", type=int, default=8)
    today = int(time.strftime("%Y%m%d", time.gmtime()))
    parser.add_argument("--seed", type=int, default=today)
    parser.add_argument("--python", default=shutil.which("python3.12") or sys.executable)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--cache", type=Path, default=cache / "agent-habitat/bench/ladder")
    parser.add_argument(
        "--after",
        type=Path,
        default=AFTER,
        help="the measured habitat (default: this venv's; a frozen copy keeps a long run from "
        "picking up edits made meanwhile)",
    )
    parser.add_argument("--flow", choices=("steady", "first", "new-project"), default="steady")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    # SIGTERM (a stopped run) unwinds like Ctrl-C, so the mutated copy is reset.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    compiled = [compile_habitat(h) for h in (args.baseline, args.after)]
    load_before = [round(x, 2) for x in os.getloadavg()]
    homes = None
    if args.flow != "steady":  # a side's home for the whole run (`_fresh` clears it)
        homes = {s: Path(tempfile.mkdtemp(prefix=f"lo-{s[0]}-", dir="/tmp")) for s in HOMES}
    try:
        results = [run_project(name, args, homes) for name in args.projects.split(",")]
    finally:
        for home in (homes or {}).values():
            shutil.rmtree(home, ignore_errors=True)
    results[0]["opens_run"] = True
    load_after = [round(x, 2) for x in os.getloadavg()]
    print_table(
        f"one-shot verify, no host, interleaved, flow {args.flow}; seed {args.seed}; "
        f"load {load_before} -> {load_after}",
        [
            "project",
            "edits",
            "median wall s: before / after / full",
            "median verdict s: before / after",
            "median CPU s: before / after / full",
            "after/before per edit: median",
            "one-shot - full s: before / after",
            "misses before / after",
            "verdicts differ",
            "after <= full + 1 s",
        ],
        [summary(p, args.flow) for p in results],
    )
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    payload = {
        "commit": head.stdout.strip(),
        "baseline": str(args.baseline),
        "after": str(args.after),
        "compiled": compiled,
        "seed": args.seed,
        "flow": args.flow,
        "load_before": load_before,
        "load_after": load_after,
        "projects": results,
    }
    print(f"wrote {write_json('ladder_oneshot', payload, args.out)}")


if __name__ == "__main__":
    main()
