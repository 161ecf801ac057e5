"""The first verifies after a project opens, through the workspace host, as a new user meets
them (issue 22: the first verify must not wait for the whole warm-up), next to plain pytest.

Per project (ladder_harness_projects.py) and round: for each side (a baseline habitat, given
as its source folder, and this worktree's; their order swapped every round) a fresh state
folder, the host started on the clean project (`habitat host start --project`, as an MCP
client's bridge starts it: the warm-up begins), at once one seeded one-line edit
(ladder_harness_mutations.py) and `habitat verify --json`; then the second and the third
edit, each on the clean tree, each verified the same way. After every verify, on the same
tree, the plain full suite (`python -m pytest -q -p no:cacheprovider`) is timed: the peer a
user would run instead, and `pytest --testmon` from a copy of its recording run's database
(made once per project on the clean tree; issue 22's target is testmon's wall + 0.3 s).
With `--think S` the edits come as a user or an agent makes them, S seconds after the
verdict before (a warm-up then runs beside the next verify), and the peers are timed once
the host stopped, each edit applied again.
Once per round, also on the first edit, the one-shot cold path (`habitat verify --json
--no-host`, a fresh state folder) of each side in the round's order, then the plain suite:
the same rungs with nothing warm.

Truth: a verify misses when the full suite has a failure the clean tree does not and it is
not red; a false red is red where the suite found nothing new and no rung before the tests
(lint, types) named a new finding.

    .venv/bin/python bench/ladder/ladder_first_verify.py --baseline-src /path/to/base/src
        [--projects tabulate,isodate] [--rounds 3] [--seed 22] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_bytecode import compile_habitat
from ladder_harness import Runner, _ran
from ladder_harness_mutations import Mutation, apply, choose
from ladder_harness_projects import PROJECTS, prepare, reset, source_files

from _report import print_table, write_json

REPO = Path(__file__).resolve().parents[2]
HABITAT = Path(sys.executable).parent / "habitat"
EDITS = ("first", "second", "third")
HEAD = [
    "project",
    "edit",
    "before: median verify s / pytest s (verify/pytest)",
    "after: median verify s / pytest s (verify/pytest)",
    "one-shot cold s before -> after (one-shot/pytest) / pytest s",
    "testmon s (tests run)",
    "misses / false reds",
]
"""The table's columns (bench/tables_runs.py prints the same from the committed JSON)."""


def _json(text: str) -> dict[str, Any]:
    start = text.find("{")
    try:
        return json.loads(text[start:]) if start >= 0 else {"error": text[-500:]}
    except ValueError:
        return {"error": text[-500:]}


def _verify(run: Runner, env: dict[str, str], *extra: str) -> dict[str, Any]:
    argv = [str(HABITAT), "verify", "--json", "--policy", "standard", *extra]
    wall, text = run._timed(argv, env)
    result = _json(text)
    rungs = {r["rung"]: [r["state"], r["duration_s"]] for r in result.get("rungs", [])}
    new = sum(
        int(r.get("new_findings") or 0)
        for r in result.get("rungs", [])
        if r["rung"] in ("diagnose.files", "compile.project")
    )
    return {
        "wall_s": round(wall, 3),
        "state": result.get("state", "error"),
        "rungs": rungs,
        "new_findings": new,
        "timing": result.get("timing"),
    }


def _full(run: Runner, base_failed: set[str]) -> dict[str, Any]:
    wall, failed, _ = run.full()
    return {"wall_s": round(wall, 3), "caught": bool(failed - base_failed)}


def _truth(got: dict[str, Any], full: dict[str, Any]) -> None:
    got["miss"] = full["caught"] and got["state"] != "red"
    got["false_red"] = got["state"] == "red" and not full["caught"] and not got["new_findings"]


def _peers(run: Runner, base_failed: set[str]) -> dict[str, Any]:
    """The plain full suite and testmon on the tree as it stands."""
    full = _full(run, base_failed)
    tm_wall, tm_counts, _ = run.testmon()
    return {"full": full, "testmon": {"wall_s": round(tm_wall, 3), "ran": _ran(tm_counts)}}


def _side(
    run: Runner,
    env: dict[str, str],
    edits: list[Mutation],
    base_failed: set[str],
    think: float | None,
) -> list[dict[str, Any]]:
    """A fresh host on the clean project, then each edit verified, and the peers timed on
    its tree: right after its verdict (`think` None), or, with `think` seconds between a
    verdict and the next edit, once the host stopped (each edit applied again)."""
    reset(run.root)
    run._timed([str(HABITAT), "host", "start", "--project", str(run.root)], env)
    out: list[dict[str, Any]] = []
    try:
        for name, m in zip(EDITS, edits, strict=True):
            reset(run.root)
            apply(run.root, m)
            got = _verify(run, env)
            out.append({"edit": name, "mutation": m.label, "verify": got})
            if think is None:
                out[-1].update(_peers(run, base_failed))
            elif name != EDITS[-1]:
                time.sleep(think)  # the user reads the verdict and makes the next edit
    finally:
        run._timed([str(HABITAT), "host", "stop", "--project", str(run.root)], env)
        reset(run.root)
    if think is not None:
        for e, m in zip(out, edits, strict=True):
            reset(run.root)
            apply(run.root, m)
            e.update(_peers(run, base_failed))
        reset(run.root)
    for e in out:
        _truth(e["verify"], e["full"])
    return out


def _home(tag: str) -> Path:
    home = Path(tempfile.mkdtemp(prefix=f"lfv-{tag}-", dir="/tmp"))
    home.chmod(0o700)
    return home


def run_project(name: str, args: argparse.Namespace) -> dict[str, Any]:
    project = PROJECTS[name]
    root, python = prepare(project, args.cache.resolve(), args.python)
    reset(root)
    run = Runner(project, root, python, _home("full"))
    _, base_failed, total = run.full()
    tm_record, _, _ = run.testmon(record=True)  # testmon's recording run, on the clean tree
    files = source_files(root, project.sources)
    pool = choose(root, files, 3 * args.rounds, args.seed)
    after = {"PYTHONPATH": str(args.after_src)} if args.after_src else {}
    sides = {"before": {"PYTHONPATH": str(args.baseline_src)}, "after": after}
    rounds: list[dict[str, Any]] = []
    try:
        for i in range(args.rounds):
            edits = pool[3 * i : 3 * i + 3]
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            row: dict[str, Any] = {"round": i + 1, "order": order}
            for side in order:
                home = _home(side[0])
                env = {**run.env, **sides[side], "HABITAT_HOME": str(home)}
                try:
                    row[side] = _side(run, env, edits, base_failed, args.think)
                finally:
                    shutil.rmtree(home, ignore_errors=True)
            # The one-shot of each side (its own src), in the round's order, then the suite.
            for side in order:
                home = _home("o")
                key = "oneshot" if side == "after" else "oneshot_before"
                try:
                    reset(root)
                    apply(root, edits[0])
                    env = {**run.env, **sides[side], "HABITAT_HOME": str(home)}
                    row[key] = _verify(run, env, "--no-host")
                finally:
                    shutil.rmtree(home, ignore_errors=True)
            try:
                # From the clean tree: the last one-shot left the edit applied, and a second
                # application of one that changes the line's length writes another line.
                reset(root)
                apply(root, edits[0])
                row["oneshot_full"] = _full(run, base_failed)
                for key in ("oneshot", "oneshot_before"):
                    _truth(row[key], row["oneshot_full"])
            finally:
                reset(root)
            rounds.append(row)
            for side in order:
                said = ", ".join(
                    f"{e['edit']} {e['verify']['wall_s']:.2f}s {e['verify']['state']} "
                    f"(pytest {e['full']['wall_s']:.2f}s)"
                    for e in row[side]
                )
                print(f"[{name}] round {i + 1} {side}: {said}", file=sys.stderr, flush=True)
            print(
                f"[{name}] round {i + 1} one-shot before / after: "
                f"{row['oneshot_before']['wall_s']:.2f}s {row['oneshot_before']['state']} / "
                f"{row['oneshot']['wall_s']:.2f}s {row['oneshot']['state']} "
                f"(pytest {row['oneshot_full']['wall_s']:.2f}s)",
                file=sys.stderr,
                flush=True,
            )
    finally:
        reset(root)
        shutil.rmtree(run.home, ignore_errors=True)
    return {
        "project": f"{project.name} {project.version}",
        "tests": total,
        "testmon_recording_s": round(tm_record, 3),
        "rounds": rounds,
    }


def rows(p: dict[str, Any]) -> list[list[str]]:
    med = statistics.median
    out: list[list[str]] = []
    for index, edit in enumerate(EDITS):
        cells = [p["project"], edit]
        for side in ("before", "after"):
            walls = [r[side][index]["verify"]["wall_s"] for r in p["rounds"]]
            fulls = [r[side][index]["full"]["wall_s"] for r in p["rounds"]]
            ratio = med(w / f for w, f in zip(walls, fulls, strict=True))
            cells.append(f"{med(walls):.2f} / {med(fulls):.2f} ({ratio:.2f}x)")
        if index == 0:
            fulls = [r["oneshot_full"]["wall_s"] for r in p["rounds"]]
            said = []
            for key in ("oneshot_before", "oneshot"):  # runs before both sides had one: after
                shots = [r[key]["wall_s"] for r in p["rounds"] if key in r]
                if len(shots) == len(fulls):
                    ratio = med(w / f for w, f in zip(shots, fulls, strict=True))
                    said.append(f"{med(shots):.2f} ({ratio:.2f}x)")
            cells.append(f"{' -> '.join(said)} / {med(fulls):.2f}")
        else:
            cells.append("")
        runs = [r[s][index] for r in p["rounds"] for s in ("before", "after")]
        testmon = [e["testmon"] for e in runs if "testmon" in e]  # runs before it: none
        cells.append(
            f"{med(t['wall_s'] for t in testmon):.2f} ({med(t['ran'] for t in testmon):g})"
            if testmon
            else ""
        )
        got = [e["verify"] for e in runs]
        cells.append(f"{sum(g['miss'] for g in got)} / {sum(g['false_red'] for g in got)}")
        out.append(cells)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--baseline-src", type=Path, required=True, help="the baseline's src folder"
    )
    parser.add_argument(
        "--after-src",
        type=Path,
        help="the measured habitat's src folder (default: this venv's; a copy keeps a "
        "long run from picking up edits made meanwhile)",
    )
    parser.add_argument("--projects", default="tabulate,isodate")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--python", default=shutil.which("python3.12") or sys.executable)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--cache", type=Path, default=cache / "agent-habitat/bench/ladder")
    parser.add_argument(
        "--think",
        type=float,
        help="seconds between a verdict and the next edit, the peers timed once the host "
        "stopped (default: the peers timed between them, on each edit's tree)",
    )
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
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    results: list[dict[str, Any]] = []
    written = None
    for name in args.projects.split(","):
        results.append(run_project(name, args))
        # Written after each project: a run stopped later (a mutation that makes a suite run
        # for minutes) keeps what it measured.
        payload = {
            "commit": head.stdout.strip(),
            "think_s": args.think,
            "baseline_src": str(args.baseline_src),
            "after_src": str(args.after_src or compiled),
            "compiled": compiled,
            "seed": args.seed,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "load_before": load_before,
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "projects": results,
        }
        written = write_json("ladder_first_verify", payload, args.out)
    print_table(
        f"edit -> verdict through a host opened just before, vs plain pytest on the same tree; "
        f"{args.rounds} rounds, seed {args.seed}; load {load_before} -> "
        f"{[round(x, 2) for x in os.getloadavg()]}",
        HEAD,
        [row for p in results for row in rows(p)],
    )
    print(f"wrote {written}")


if __name__ == "__main__":
    main()
