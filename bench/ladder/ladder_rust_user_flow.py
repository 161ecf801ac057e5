"""The Rust ladder on a new user's flow, side by side with the user's own `cargo test`
(issue 27): a fresh HABITAT_HOME, open the project (the host starts), edit one line,
`habitat verify`; then a second edit and verify again.

Per project and round: two copies of the crate (ladder_harness_rust.prepare: a crates.io
package as a fresh git repository), each with the target folder its user's own `cargo test`
left on the clean tree (built once, untimed, the same for both). Copy A is the ladder's:
the host starts on it (and is waited for until its process is quiet, `host_settled`: a host
started last was still importing while the other side's first verify ran, which made the
second-listed habitat slower in both orders), and after each edit `habitat verify --json`
(policy standard) gives the verdict; then the user's `cargo test` runs there too
("after"), which shows whether it finds the ladder's build fresh or compiles the crate
again. Copy B is the peer: the same
edit, then `cargo test` alone, its wall the user's own. The two copies take turns on each
edit (A first on even rounds, B first on odd), so load that comes and goes falls on both.
The second edit starts from the clean file (edit 1 undone), as a user's next change would.
Edits are ladder_harness_rust_mutations' seeded one-line mutations (seed + round), so most
are reds the full suite also fails; the verdict's state is kept beside each wall.

Timed at normal priority; cargo's jobs pinned to 1 for both sides (CARGO_BUILD_JOBS=1).

    .venv/bin/python bench/ladder/ladder_rust_user_flow.py [--projects strsim,scopeguard]
        [--rounds 3] [--seed 41] [--out NAME]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_harness_rust import PROJECTS, Runner, _git, host_settled, prepare
from ladder_harness_rust_mutations import Mutation, apply, choose
from rust_phases import cargo_build_s, verdict_phases

from _report import load_now, print_table, run_meta, started, write_json

DATA = Path(__file__).resolve().parents[2] / "docs" / "bench-data"
_TEST = ["cargo", "test", "--no-fail-fast"]


def _cargo_test(run: Runner) -> tuple[float, bool, bool, float | None]:
    """The user's `cargo test` in the project's own target folder: (wall, passed, compiled
    anything, its build's seconds)."""
    wall, text = run.timed(_TEST)
    passed = "test result: FAILED" not in text and "error" not in text
    return wall, passed, "Compiling " in text, cargo_build_s(text)


def _edit(run: Runner, m: Mutation | None) -> None:
    _git(run.root, "checkout", "--", ".")
    if m is not None:
        apply(run.root, m)


def _verify(run: Runner, habitat: str) -> tuple[float, dict[str, Any], dict[str, Any]]:
    """The verdict's wall, its JSON, and its phases (rust_phases)."""
    since = time.time()
    wall, text = run.timed([habitat, "verify", "--json"])
    phases = verdict_phases(run.home, since)
    try:
        return wall, json.loads(text[text.find("{") :]), phases
    except ValueError:
        return wall, {"error": text[-500:]}, phases


def _round(name: str, index: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    project = PROJECTS[name]
    cache = args.cache.resolve() / f"round{index}"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    sides = [*args.habitats, "peer"]
    runs: dict[str, Runner] = {}
    for side in sides:
        root, _, _ = prepare(project, args.mirrors, cache)
        home = cache / f"home-{side}"
        home.mkdir(mode=0o700)
        runs[side] = Runner(root.rename(cache / f"{name}-{side}"), home)
        runs[side].limit_s = args.limit
    for run in runs.values():
        run.timed(_TEST)  # the user's own build of the clean tree, as any project has
    opened, started = {}, {}
    for side in args.habitats:
        opened[side], started[side] = runs[side].timed(
            [args.habitats[side], "host", "start", "--project", "."]
        )
    settled = {side: host_settled(text) for side, text in started.items()}
    edits = choose(runs["peer"].root, list(project.sources), args.edits, args.seed + index)
    rows: list[dict[str, Any]] = []
    try:
        for n, m in enumerate(edits, 1):
            for run in runs.values():
                _edit(run, m)
            shift = (index * len(edits) + n) % len(sides)
            order = sides[shift:] + sides[:shift]
            row: dict[str, Any] = {
                "project": name,
                "round": index,
                "edit": n,
                "mutation": m.label,
                "order": order,
            }
            for side in order:
                run = runs[side]
                if side == "peer":
                    peer = _cargo_test(run)
                    row["cargo_test_s"], row["cargo_test_passed"], _, build = peer
                    row["cargo_test_build_s"] = build
                    continue
                wall, result, phases = _verify(run, args.habitats[side])
                after, _, compiled, _ = _cargo_test(run)
                row[side] = {
                    "open_s": round(opened[side], 2) if n == 1 else None,
                    "host_settled_s": settled[side] if n == 1 else None,
                    "verify_s": round(wall, 2),
                    "state": result.get("state", "error"),
                    "rung_s": {r["rung"]: r.get("duration_s") for r in result.get("rungs", [])},
                    "after_s": round(after, 2),
                    "after_compiled": compiled,
                    "phases": phases,
                }
            row["cargo_test_s"] = round(row["cargo_test_s"], 2)
            for side in args.habitats:
                row[side]["ratio"] = round(row[side]["verify_s"] / row["cargo_test_s"], 2)
            row["load"] = load_now()[0]
            rows.append(row)
            print(f"[{name} r{index} e{n}] {json.dumps(row)}", file=sys.stderr, flush=True)
    finally:
        for side in args.habitats:
            runs[side].timed([args.habitats[side], "host", "stop", "--project", "."])
        shutil.rmtree(cache, ignore_errors=True)
    return rows


def summarise(rows: list[dict[str, Any]], habitats: list[str]) -> list[dict[str, Any]]:
    out = []
    for name in dict.fromkeys(r["project"] for r in rows):
        for edit in (1, 2):
            mine = [r for r in rows if r["project"] == name and r["edit"] == edit]
            if not mine:
                continue
            peer = round(statistics.median(r["cargo_test_s"] for r in mine), 2)
            for side in habitats:

                def med(key: str, side: str = side, rs: list[dict[str, Any]] = mine) -> float:
                    return round(float(statistics.median(r[side][key] for r in rs)), 2)

                out.append(
                    {
                        "project": name,
                        "edit": edit,
                        "habitat": side,
                        "n": len(mine),
                        "states": ", ".join(sorted({r[side]["state"] for r in mine})),
                        "verify_median_s": med("verify_s"),
                        "cargo_test_median_s": peer,
                        "ratio_median": med("ratio"),
                        "after_median_s": med("after_s"),
                        "after_compiled": sum(r[side]["after_compiled"] for r in mine),
                        "load_median": round(statistics.median(r["load"] for r in mine), 1),
                    }
                )
    return out


def phase_rows(rows: list[dict[str, Any]], habitats: list[str]) -> list[list[str]]:
    """Per edit and habitat: the verdict, each phase as start+length, and the peer's build
    and wall beside them."""

    def cell(phase: dict[str, Any] | None) -> str:
        if phase is None:
            return ""
        built = f" (build {phase['build_s']})" if phase.get("build_s") is not None else ""
        return f"{phase['start_s']}+{phase['length_s']}{built}"

    names = ["clippy", "HEAD clippy", "lib check", "HEAD lib check", "cargo test"]
    names += ["HEAD test build", "HEAD tests"]
    out = []
    for r in rows:
        for side in habitats:
            got = r[side].get("phases", {})
            out.append(
                [
                    r["project"],
                    str(r["edit"]),
                    side,
                    r[side]["state"],
                    str(r[side]["verify_s"]),
                    *(cell(got.get(n)) for n in names),
                    f"{r['cargo_test_s']} (build {r.get('cargo_test_build_s')})",
                ]
            )
    return out


def print_phases(rows: list[dict[str, Any]], habitats: list[str]) -> None:
    head = ["project", "edit", "habitat", "verdict", "wall s", "clippy", "HEAD clippy"]
    head += ["lib check", "HEAD lib check"]
    head += ["cargo test", "HEAD test build", "HEAD tests", "user's cargo test"]
    print_table("Phases (start+length s from the verify's start)", head, phase_rows(rows, habitats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", default="strsim,scopeguard")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--edits", type=int, default=2)
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "rust-user-flow"
    )
    parser.add_argument("--out", default="", help="also write docs/bench-data/OUT.json")
    parser.add_argument(
        "--limit",
        type=float,
        default=300.0,
        help="seconds before a verify or cargo test is "
        "stopped (an edit that makes a test loop forever)",
    )
    parser.add_argument(
        "--habitat",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a habitat CLI to measure (repeat: each gets its own copy, interleaved); "
        "default: this venv's, as 'habitat'",
    )
    args = parser.parse_args()
    mine = str(Path(sys.executable).parent / "habitat")
    args.habitats = {
        k: str(Path(v).absolute()) for k, v in (h.split("=", 1) for h in args.habitat)
    } or {"habitat": mine}
    start = started()
    rows = [
        row
        for index in range(args.rounds)
        for name in args.projects.split(",")
        for row in _round(name, index, args)
    ]
    summaries = summarise(rows, list(args.habitats))
    print_phases(rows, list(args.habitats))
    shown = {
        "project": "project",
        "edit": "edit",
        "habitat": "habitat",
        "n": "n",
        "states": "verdicts",
        "verify_median_s": "verdict s",
        "cargo_test_median_s": "cargo test s",
        "ratio_median": "verdict / cargo test",
        "after_median_s": "cargo test after verdict s",
        "after_compiled": "after compiled",
        "load_median": "load",
    }
    table = [[str(s[k]) for k in shown] for s in summaries]
    print_table(
        "Rust new-user flow: habitat verify vs cargo test (medians)", [*shown.values()], table
    )
    out = DATA / f"{args.out}.json" if args.out else None
    path = write_json(
        "ladder_rust_user_flow",
        {
            "seed": args.seed,
            "habitats": args.habitats,
            **run_meta(start),
            "summaries": summaries,
            "rows": rows,
        },
        out,
    )
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
