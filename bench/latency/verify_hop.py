"""Where `habitat verify`'s wall goes around the rungs, through a warm host, before and after
a change (issue 22 and 27: the hop common to every toolchain).

    .venv/bin/python bench/latency/verify_hop.py --habitat before=CLI --habitat after=CLI \
        [--rounds 10] [--out docs/bench-data/verify_hop-DATE.json]

A CLI is a `habitat` script (e.g. `PYTHONPATH=<that src> exec .venv/bin/python -m
agent_habitat "$@"`); each gets its own HABITAT_HOME and host on one copy of the demo sample
project (`habitat demo`'s: a package, its tests, ruff, mypy, pytest), trusted and warmed by
one verify. Per round the project gets a new one-line edit (new content: no memo answers
it), then every CLI runs `habitat verify` in turn (the order rotates each round, so load and
caches favour none). From the CLI's start (t0, taken just before it is spawned) and the
host's own event times (the same clock: `time.time()`), each verify's wall splits into:

* `to_queue`: t0 → `environment.task.queued` (the interpreter's start and imports, the
  request, the host's snapshot of the tree);
* `to_first_rung`: → the first rung's `environment.task.started`;
* `rungs`: → the last rung's `environment.task.completed` (its process's end and reaping);
* `to_verdict`: → `verify.epoch.finished` (the check that the tree did not move, the record);
* `to_exit`: → the CLI's exit (the verdict sent, read and printed).

Reported per CLI: the median of each part and of the whole wall, the ratio of the medians
after / before, and the load. The JSON keeps every verify.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
from _report import print_table, run_meta, started, write_json

PARTS = ("to_queue", "to_first_rung", "rungs", "to_verdict", "to_exit")
_TARGET = "src/calc/text.py"


def _edit(root: Path, n: int) -> None:
    text = root / _TARGET
    lines = [line for line in text.read_text(encoding="utf-8").splitlines() if "BENCH" not in line]
    text.write_text("\n".join([*lines, f"BENCH = {n}"]) + "\n", encoding="utf-8")


def _events(cli: str, root: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    out = subprocess.run(
        [cli, "events", "--json", "--project", str(root)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _verify(cli: str, root: Path, env: dict[str, str]) -> dict[str, Any]:
    seen = max((e["id"] for e in _events(cli, root, env)), default=0)
    t0 = time.time()
    proc = subprocess.run(
        [cli, "verify", "--project", str(root)], env=env, capture_output=True, text=True
    )
    t_exit = time.time()
    events = [e for e in _events(cli, root, env) if e["id"] > seen]
    queued = next(e for e in events if e["kind"] == "environment.task.queued")
    task = queued["task"]
    rungs = [e for e in events if str(e.get("task") or "").startswith(task + ".")]
    starts = [e["ts"] for e in rungs if e["kind"] == "environment.task.started"]
    ends = [e["ts"] for e in rungs if e["kind"] != "environment.task.started"]
    finished = next(
        e["ts"] for e in events if e["kind"] == "verify.epoch.finished" and e["task"] == task
    )
    marks = [t0, queued["ts"], min(starts), max(ends), finished, t_exit]
    verdict = next((ln for ln in proc.stdout.splitlines() if ln.startswith("ladder ")), "")
    return {
        "exit_code": proc.returncode,
        "verdict": verdict.split("  ")[0],
        "wall_s": round(t_exit - t0, 4),
        **{part: round(marks[i + 1] - marks[i], 4) for i, part in enumerate(PARTS)},
        "load": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--habitat", action="append", default=[], metavar="NAME=CLI")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--note", default="", help="what the CLIs are (kept in the JSON)")
    args = parser.parse_args()
    if len(args.habitat) < 2:
        sys.exit("--habitat NAME=CLI: give two or more (before and after)")
    begun = started()
    work = Path(tempfile.mkdtemp(prefix="bench-hop-"))
    from agent_habitat.cli.demo_sample import build_sample

    root = build_sample(work / "calc")
    sides: dict[str, tuple[str, dict[str, str]]] = {}
    for spec in args.habitat:
        name, _, cli = spec.partition("=")
        home = work / f"home-{name}"
        home.mkdir(mode=0o700)
        sides[name] = (cli, {**os.environ, "HABITAT_HOME": str(home)})
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
    try:
        for cli, env in sides.values():
            subprocess.run([cli, "trust", "--project", str(root)], env=env, check=True,
                           capture_output=True)  # fmt: skip
            subprocess.run([cli, "host", "start", "--project", str(root)], env=env, check=True,
                           capture_output=True)  # fmt: skip
        _edit(root, 0)
        for cli, env in sides.values():  # warm: the first climb starts the checkers
            _verify(cli, root, env)
        names = list(sides)
        for n in range(1, args.rounds + 1):
            _edit(root, n)
            time.sleep(0.3)  # the watcher's report of the edit, before any verify
            for k in range(len(names)):
                name = names[(n + k) % len(names)]
                cli, env = sides[name]
                row = _verify(cli, root, env) | {"round": n, "order": k}
                rows[name].append(row)
                print(f"[{name} {n}] {row['verdict']} wall {row['wall_s']:.3f} s "
                      + " ".join(f"{p} {row[p]:.3f}" for p in PARTS), file=sys.stderr)  # fmt: skip
    finally:
        for cli, env in sides.values():
            subprocess.run([cli, "host", "stop", "--project", str(root)], env=env,
                           capture_output=True)  # fmt: skip
    first = names[0]
    table = []
    for name, got in rows.items():
        med = {p: statistics.median(r[p] for r in got) for p in (*PARTS, "wall_s")}
        base = {p: statistics.median(r[p] for r in rows[first]) for p in (*PARTS, "wall_s")}
        table.append([name, *(f"{med[p] * 1000:.0f}" for p in (*PARTS, "wall_s")),
                      f"{med['wall_s'] / base['wall_s']:.2f}",
                      f"{statistics.median(r['load'] for r in got):.1f}"])  # fmt: skip
    print_table(
        f"habitat verify of a one-line edit through a warm host (demo sample), {args.rounds} "
        f"rounds, medians in ms; ratio: wall / {first}'s",
        ["habitat", *PARTS, "wall", "ratio", "load"],
        table,
    )
    payload = {"rounds": args.rounds, "note": args.note,
               "sides": {k: v[0] for k, v in sides.items()},
               "verifies": rows, **run_meta(begun)}  # fmt: skip
    print(f"wrote {write_json('verify_hop', payload, args.out)}")


if __name__ == "__main__":
    main()
