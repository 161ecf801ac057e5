"""A compile error on a line the change added, or on lines it did not touch, at a first verify
(issue 27): `habitat verify` of each `--habitat`, interleaved, against the user's own
`cargo test` of the same edit in a copy of its own.

Per round: scopeguard 1.2.0 (crates.io, ladder_harness_rust.prepare) copied once per side
and once for the peer, each with the target folder its user's `cargo test` left on the clean
tree; a fresh HABITAT_HOME and host per side, each waited for until its process is quiet
(`host_settled`: its own start done, as it is by the time a person has made an edit; the
seconds are kept as `host_settled_s`); the edit inserts `let _flag: bool = 1;` (E0308)
as a new line into `Always::should_run` (`--edit added`), or changes the trait's
`fn should_run() -> bool;` to take an argument (`--edit untouched`: E0050 at the three impls
and E0061 at the call in `Drop`, lines the change did not touch, so only HEAD's check can
say they are new). The sides take turns going first. Each verdict's phases (rust_phases:
start+length of each cargo process from the verify's start) are kept beside it, with the
hop before the first of them and the host's timing of the verdict (`timing`: its wall, the
rungs, its preparation), so the CLI's own part is the rest of the verdict's wall.

    .venv/bin/python bench/ladder/rust_added_line.py --habitat before=PATH --habitat after=PATH
        [--rounds 3] [--edit added|untouched] [--out NAME]
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
from ladder_harness_rust import PROJECTS, Runner, host_settled, prepare
from rust_phases import verdict_phases

from _report import load_now, print_table, run_meta, started, write_json

DATA = Path(__file__).resolve().parents[2] / "docs" / "bench-data"
_LINE = 232  # inside `impl Strategy for Always { fn should_run() -> bool { | true } }`
_ADDED = "        let _flag: bool = 1;\n"
_SIGNATURE = 204  # `fn should_run() -> bool;` in `pub trait Strategy`


def _edit(root: Path, kind: str) -> None:
    path = root / "src" / "lib.rs"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    if kind == "untouched":
        assert lines[_SIGNATURE - 1].strip() == "fn should_run() -> bool;", lines[_SIGNATURE - 1]
        lines[_SIGNATURE - 1] = "    fn should_run(flag: bool) -> bool;\n"
    else:
        assert lines[_LINE - 1].strip() == "true", lines[_LINE - 1]
        lines.insert(_LINE - 1, _ADDED)
    path.write_text("".join(lines), encoding="utf-8")


def _round(index: int, args: argparse.Namespace) -> dict[str, Any]:
    cache = args.cache.resolve() / f"round{index}"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    sides = [*args.habitats, "peer"]
    runs: dict[str, Runner] = {}
    for side in sides:
        root, _, _ = prepare(PROJECTS["scopeguard"], args.mirrors, cache)
        home = cache / f"home-{side}"
        home.mkdir(mode=0o700)
        runs[side] = Runner(root.rename(cache / f"scopeguard-{side}"), home)
        runs[side].timed(["cargo", "test", "--no-fail-fast"])
    row: dict[str, Any] = {"round": index}
    try:
        started = {
            side: runs[side].timed([args.habitats[side], "host", "start", "--project", "."])[1]
            for side in args.habitats
        }
        settled = {side: host_settled(text) for side, text in started.items()}
        shift = index % len(sides)
        for side in sides[shift:] + sides[:shift]:
            run = runs[side]
            _edit(run.root, args.edit)
            if side == "peer":
                row["cargo_test_s"] = round(run.timed(["cargo", "test", "--no-fail-fast"])[0], 2)
                continue
            since = time.time()
            wall, text = run.timed([args.habitats[side], "verify", "--json"])
            phases = verdict_phases(run.home, since)
            result = json.loads(text[text.find("{") :])
            red = [r for r in result.get("rungs", []) if r.get("state") == "red"]
            row[side] = {
                "verify_s": round(wall, 2),
                "state": result.get("state"),
                "red_rung": red[0]["rung"] if red else None,
                "baseline": red[0].get("baseline") if red else None,
                "new": [
                    (d["file"], d["line"], d["code"])
                    for d in (red[0]["diagnostics"] if red else [])
                ],
                "phases": phases,
                # The hop: the CLI's start to the first cargo process the climb ran, and the
                # host's own account of its wall (the rest of the CLI's wall is the CLI's).
                "first_cargo_s": min(
                    (s for p in phases.values() if (s := p["start_s"]) is not None), default=None
                ),
                "timing": result.get("timing"),
                "host_settled_s": settled[side],
            }
        row["load"] = load_now()[0]
    finally:
        for side in args.habitats:
            runs[side].timed([args.habitats[side], "host", "stop", "--project", "."])
        shutil.rmtree(cache, ignore_errors=True)
    for side in args.habitats:
        row[side]["ratio"] = round(row[side]["verify_s"] / row["cargo_test_s"], 2)
    print(f"[round {index}] {json.dumps(row)}", file=sys.stderr, flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "rust-added-line"
    )
    parser.add_argument("--out", default="", help="also write docs/bench-data/OUT.json")
    parser.add_argument("--habitat", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--edit", choices=("added", "untouched"), default="added")
    args = parser.parse_args()
    args.habitats = {k: str(Path(v).absolute()) for k, v in (h.split("=", 1) for h in args.habitat)}
    if not args.habitats:
        parser.error("--habitat NAME=PATH: at least one habitat CLI to measure")
    start = started()
    rows = [_round(i, args) for i in range(args.rounds)]
    table = [
        [
            side,
            str(len(rows)),
            ", ".join(sorted({str(r[side]["state"]) for r in rows})),
            str(statistics.median(r[side]["verify_s"] for r in rows)),
            str(statistics.median(r["cargo_test_s"] for r in rows)),
            str(statistics.median(r[side]["ratio"] for r in rows)),
            str(round(statistics.median(r["load"] for r in rows), 1)),
        ]
        for side in args.habitats
    ]
    head = ["habitat", "n", "verdicts", "verdict s", "cargo test s", "verdict / cargo test", "load"]
    lines = "an added line" if args.edit == "added" else "untouched lines"
    print_table(f"A compile error on {lines}, first verify (medians)", head, table)
    out = DATA / f"{args.out}.json" if args.out else None
    path = write_json(
        "rust_added_line",
        {"habitats": args.habitats, "edit": args.edit, **run_meta(start), "rows": rows},
        out,
    )
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
