"""Each Node rung through a warm host against the tool a person would run by hand, per edit,
interleaved (issue 27): `diagnose.files` against `npx eslint <file>` (cold), `compile.project`
against `npx tsc --noEmit`, `test.scoped` against `npx vitest related <file> --run` (or jest
`--findRelatedTests`). Each round applies one seeded single-line mutation of the project's
sources (ladder_harness_node_mutate.cjs), then runs the six commands in a rotated order,
then puts the file back. A host is started with no warm-up asked for and nothing verified
before its first round: round 1 is a user's first experience after opening the project (the
warm-up starts the warm eslint and tsc at background priority while the first verify runs
each tool cold beside them, toolchains/node/race.py), and is reported apart. `--first K`
runs K more first rounds, each on a fresh host with a fresh state folder (no incremental
tsc state, no warm checker), with its own mutation and rotation; the steady state is the
rounds after the first on one host.

The projects are ladder_harness_node.py's (prepared by it under --workdir, or from
--source). A habitat figure is the wall of `habitat verify --json --rung R` (the CLI through
the host included); a peer's is its command's wall.

    .venv/bin/python bench/ladder/node_warm_tools.py --project pathe \
        --source pathe=/path/to/pathe.git [--rounds 8] [--first 3] [--seed 9]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_harness_node import PROJECTS, Bench, _apply, _git, _run, mutations, prepare

from _report import load_now, print_table, run_meta, started, write_json

DATA = Path(__file__).resolve().parents[2] / "docs" / "bench-data"
PAIRS = (
    ("diagnose.files", "eslint"),
    ("compile.project", "tsc"),
    ("test.scoped", "related"),
)


_WARM_ANSWERED = ("the warm checker (pid", "the warm linter (pid")


def _peer(kind: str, runner: str, rel: str) -> list[str]:
    if kind == "eslint":
        return ["npx", "eslint", "--format", "json", rel]
    if kind == "tsc":
        return ["npx", "tsc", "--noEmit", "-p", "tsconfig.json"]
    if runner == "jest":
        return ["npx", "jest", "--findRelatedTests", rel]
    return ["npx", "vitest", "related", rel, "--run"]


def _state(result: dict[str, Any], rung: str) -> str:
    found = [r for r in result.get("rungs", []) if r["rung"] == rung]
    return str(found[0]["state"]) if found else str(result.get("state"))


def round_(bench: Bench, runner: str, mutation: dict[str, Any], turn: int) -> dict[str, Any]:
    _apply(bench.root, mutation)
    rel = mutation["file"]
    jobs: list[tuple[str, str]] = []
    for rung, kind in PAIRS:
        jobs += [("habitat", rung), ("peer", kind)]
    shift = turn % len(jobs)
    jobs = jobs[shift:] + jobs[:shift]  # rotated: neither side always runs first
    row: dict[str, Any] = {"file": rel, "line": mutation["line"], "kind": mutation["kind"]}
    try:
        for side, what in jobs:
            if side == "habitat":
                wall, result = bench.verify("--rung", what)
                row[what] = {"wall_s": round(wall, 2), "state": _state(result, what)}
                notes = [n for r in result.get("rungs", []) for n in r.get("notes", [])]
                row[what]["warm"] = any(m in n for n in notes for m in _WARM_ANSWERED)
                row[what]["raced"] = any("ran cold beside it" in n for n in notes)
            else:
                wall, code, _ = _run(_peer(what, runner, rel), bench.root)
                row[what] = {"wall_s": round(wall, 2), "exit": code}
    finally:
        _git(bench.root, "checkout", "-q", "--", rel)
    row["load"] = load_now()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", default="pathe")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--first", type=int, default=3, help="more first rounds, fresh hosts")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--workdir", default="/tmp/habitat-node-bench")
    parser.add_argument("--source", action="append", default=[], help="NAME=git repository")
    parser.add_argument("--out", default=None, help="JSON copy (default docs/bench-data/…)")
    args = parser.parse_args()
    start = started()
    project = PROJECTS[args.project]
    sources = dict(s.split("=", 1) for s in args.source)
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    root = prepare(project, Path(args.workdir), sources.get(project.name))
    home = Path(args.workdir) / f"home-{project.name}-tools-{int(time.time())}"
    chosen = mutations(root, project, args.rounds + args.first, args.seed)
    firsts = []
    for k in range(args.first):  # a fresh host and state folder each: a user's first verify
        bench = Bench(root, home.with_name(f"{home.name}-first{k}"), oneshot=False)
        bench.host("start")
        try:
            firsts.append(round_(bench, project.runner, chosen[args.rounds + k], k + 1))
        finally:
            bench.host("stop")
        print(f"[{project.name}] first round {k + 1}/{args.first} {json.dumps(firsts[-1])}")
    bench = Bench(root, home, oneshot=False)
    bench.host("start")
    rows = []
    try:
        for turn, mutation in enumerate(chosen[: args.rounds]):
            rows.append(round_(bench, project.runner, mutation, turn))
            print(f"[{project.name}] {turn + 1}/{args.rounds} {json.dumps(rows[-1])}")
    finally:
        bench.host("stop")
    later = rows[1:] or rows
    first = [rows[0], *firsts]
    table, summary = [], []
    for rung, kind in PAIRS:
        ours = [r[rung]["wall_s"] for r in later]
        theirs = [r[kind]["wall_s"] for r in later]
        ratios = [a / b for a, b in zip(ours, theirs, strict=True) if b > 0]
        ours1 = [r[rung]["wall_s"] for r in first]
        theirs1 = [r[kind]["wall_s"] for r in first]
        ratios1 = [a / b for a, b in zip(ours1, theirs1, strict=True) if b > 0]
        entry = {
            "rung": rung,
            "peer": " ".join(_peer(kind, project.runner, "<file>")),
            "first_round_s": [rows[0][rung]["wall_s"], rows[0][kind]["wall_s"]],
            "first_rounds": len(first),
            "first_habitat_median_s": round(statistics.median(ours1), 2),
            "first_peer_median_s": round(statistics.median(theirs1), 2),
            "first_ratio_median": round(statistics.median(ratios1), 3),
            "first_ratio_max": round(max(ratios1), 3),
            "first_raced": sum(bool(r[rung].get("raced")) for r in first),
            "habitat_median_s": round(statistics.median(ours), 2),
            "peer_median_s": round(statistics.median(theirs), 2),
            "ratio_median": round(statistics.median(ratios), 3),
            "warm_rounds": sum(bool(r[rung].get("warm")) for r in later),
        }
        summary.append(entry)
        table.append(
            [
                rung,
                entry["peer"],
                f"{entry['first_habitat_median_s']} / {entry['first_peer_median_s']} s",
                f"{entry['first_ratio_median']}x (max {entry['first_ratio_max']}x)",
                f"{entry['habitat_median_s']} s",
                f"{entry['peer_median_s']} s",
                f"{entry['ratio_median']}x",
                f"{entry['warm_rounds']}/{len(later)}",
            ]
        )
    version = json.loads((root / "package.json").read_text(encoding="utf-8"))["version"]
    print_table(
        f"{project.name} {version}: each rung through the host vs the tool by hand, "
        f"interleaved: round 1 on {len(first)} fresh hosts, then {len(later)} rounds on one",
        [
            "rung",
            "peer",
            "round 1 habitat / peer",
            "round 1 ratio",
            "habitat",
            "peer",
            "ratio",
            "warm",
        ],
        table,
    )
    out = Path(args.out) if args.out else DATA / f"node_warm_tools-{project.name}.json"
    payload = {
        "project": project.name,
        "version": version,
        "seed": args.seed,
        "summary": summary,
        "first_rows": firsts,
        "rows": rows,
        **run_meta(start),
    }
    print(f"wrote {write_json('node_warm_tools', payload, out)}", file=sys.stderr)


if __name__ == "__main__":
    main()
