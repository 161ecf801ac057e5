"""The tables of docs/benchmarks.md, made from the committed JSON (docs/bench-data/).

    .venv/bin/python bench/tables.py [--write]

One section per kind of run, each with its files and its place in the doc:

* `ladder`: every `ladder_harness-*.json` whose projects carry `summary.tails`
  (bench/ladder/ladder_harness.py since the held-out seeds);
* `scoped`: `ladder_harness_scoped-*.json` with like-for-like ratios (warm / warm, fresh /
  fresh; bench/ladder/ladder_harness_scoped.py);
* `warm`: `ladder_harness_warm-*.json`, compile.project against the dmypy peer in-process
  (bench/ladder/ladder_harness_warm.py);
* `first-usable`: `cli_latency-*-first-usable.json`, the first `tools/list` answer
  (bench/latency/cli_latency.py --only mcp).

It prints one Markdown table per file; `--write` puts each section into docs/benchmarks.md
between `<!-- NAME-tables:begin -->` and `<!-- NAME-tables:end -->` (both markers of every
section must be there)."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "docs" / "bench-data"
DOC = REPO / "docs" / "benchmarks.md"

sys.path.insert(0, str(Path(__file__).resolve().parent / "ladder"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_harness_stats import tail_row  # noqa: E402

_HEAD = [
    "project",
    "edits (caught)",
    "misses (95 % bound) / false reds",
    "selected ours / testmon: median, p90",
    "ratio median / p90 / max / over 2×",
    "wall s median (p90): host / one-shot / full / testmon",
    "comment edit s median / max (n)",
    "targets",
]


def table(path: Path, run: dict[str, Any]) -> str:
    after = f"{run['load_after'][0]:.1f}" if run["load_after"] else "not taken"
    loads = f"load {run['load_before'][0]:.1f} → {after}"
    lines = [
        f"`{path.relative_to(REPO)}`: {run['at']}, commit {run['commit'][:7]}, seed "
        f"{run['seed']}, {run['mutations_per_project']} mutations per project, flow "
        f"{run['flow']}, via {run['via']}, {loads} (1-min averages, before → after); "
        "figures from the second edit on." + (f" {run['note']}." if run.get("note") else ""),
        "",
        "| " + " | ".join(_HEAD) + " |",
        "|" + "---|" * len(_HEAD),
    ]
    for p in run["projects"]:
        lines.append("| " + " | ".join(tail_row(p["project"], p["summary"]["tails"])) + " |")
    return "\n".join(lines)


def ladder_tables() -> str:
    out = []
    for path in sorted(DATA.glob("ladder_harness-*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        if all("tails" in p.get("summary", {}) for p in run["projects"]):
            out.append(table(path, run))
    return "\n\n".join(out)


def _md(head: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _loads(run: dict[str, Any]) -> str:
    before, after = run.get("load_before"), run.get("load_after")
    if not before or not after:
        return "load not recorded"
    return f"load {before[0]:.1f} → {after[0]:.1f} (1-min averages, before → after)"


def _caption(path: Path, run: dict[str, Any], what: str) -> str:
    commit = run.get("commit", "")[:7] or "not recorded"
    note = f" {run['note']}" if run.get("note") else ""
    return f"`{path.relative_to(REPO)}`: {run['at']}, commit {commit}, {what}, {_loads(run)}.{note}"


def scoped_tables() -> str:
    from ladder_harness_scoped import HEAD, rows_of

    out = []
    for path in sorted(DATA.glob("ladder_harness_scoped-*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        what = (
            f"seed {run['seed']}, {run['mutations_per_project']} mutations per project, "
            f"project venvs `{Path(run['python']).name}`"
        )
        lines = [_caption(path, run, what), "", *_md(HEAD, rows_of(run["projects"]))]
        out.append("\n".join(lines))
    return "\n\n".join(out)


def warm_tables() -> str:
    from ladder_harness_warm import overhead_row

    out = []
    for path in sorted(DATA.glob("ladder_harness_warm-*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        c = run["compile"]["rounds"]
        if not c:
            continue

        def p50(key: str, c: list[dict[str, Any]] = c) -> str:
            return f"{statistics.median(r[key] for r in c) * 1000:.0f}"

        parity = run["compile"].get("parity", {})
        rows = [
            [f"compile.project end to end, {run['compile']['project']}", p50("wall_s"), "", ""],
            [
                "the daemon's own work (dmypy `run` request in-process, peer)",
                p50("dmypy_s"),
                "",
                "",
            ],
            overhead_row(c)[:2] + overhead_row(c)[3:],
            [
                "compile.project parity with a cold mypy",
                "identical" if parity.get("identical") else "DIVERGED",
                "identical",
                "✓" if parity.get("identical") else "✗",
            ],
        ]
        what = f"{len(c)} rounds"
        head = ["measure", "ms: p50 (95 % CI) / p90", "target", "verdict"]
        out.append("\n".join([_caption(path, run, what), "", *_md(head, rows)]))
    return "\n\n".join(out)


def first_usable_tables() -> str:
    out = []
    for path in sorted(DATA.glob("cli_latency-*-first-usable.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        rows = []
        for name, r in run["results"].items():
            target = run["targets"].get(name, {})
            low, high = r["ci_ms"]
            rows.append(
                [
                    name,
                    f"{r['median_ms']:.0f} ({low:.0f}–{high:.0f})",
                    f"{r['p90_ms']:.0f}",
                    f"{r['vs_python']:.1f}×",
                    target.get("target", ""),
                    target.get("verdict") or "",
                ]
            )
        what = f"{run['iterations']} interleaved rounds, `{run['command']}`"
        head = ["path", "median ms (95 % CI)", "p90", "vs python", "target", "verdict"]
        out.append("\n".join([_caption(path, run, what), "", *_md(head, rows)]))
    return "\n\n".join(out)


SECTIONS = {
    "ladder": ladder_tables,
    "scoped": scoped_tables,
    "warm": warm_tables,
    "first-usable": first_usable_tables,
}


def tables() -> dict[str, str]:
    return {name: make() for name, make in SECTIONS.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"into {DOC.relative_to(REPO)}")
    args = parser.parse_args()
    made = tables()
    if not args.write:
        print("\n\n".join(f"## {name}\n\n{text}" for name, text in made.items()))
        return
    doc = DOC.read_text(encoding="utf-8")
    for name, text in made.items():
        begin, end = f"<!-- {name}-tables:begin -->", f"<!-- {name}-tables:end -->"
        if begin not in doc or end not in doc:
            raise SystemExit(f"{DOC}: add the markers {begin} and {end} where the tables go")
        head, rest = doc.split(begin, 1)
        _, tail = rest.split(end, 1)
        doc = f"{head}{begin}\n{text}\n{end}{tail}"
    DOC.write_text(doc, encoding="utf-8")


if __name__ == "__main__":
    main()
