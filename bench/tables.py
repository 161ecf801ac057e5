"""The ladder tables of docs/benchmarks.md, made from the committed JSON (docs/bench-data/).

    .venv/bin/python bench/tables.py [--write]

Reads every `docs/bench-data/ladder_harness-*.json` whose projects carry `summary.tails`
(bench/ladder/ladder_harness.py since the held-out seeds) and prints one Markdown table per
file; `--write` puts them into docs/benchmarks.md between `<!-- ladder-tables:begin -->` and
`<!-- ladder-tables:end -->` (both markers must be there)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "docs" / "bench-data"
DOC = REPO / "docs" / "benchmarks.md"
BEGIN, END = "<!-- ladder-tables:begin -->", "<!-- ladder-tables:end -->"

sys.path.insert(0, str(Path(__file__).resolve().parent / "ladder"))
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


def tables() -> str:
    out = []
    for path in sorted(DATA.glob("ladder_harness-*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        if all("tails" in p.get("summary", {}) for p in run["projects"]):
            out.append(table(path, run))
    return "\n\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"into {DOC.relative_to(REPO)}")
    args = parser.parse_args()
    text = tables()
    if not args.write:
        print(text)
        return
    doc = DOC.read_text(encoding="utf-8")
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{DOC}: add the markers {BEGIN} and {END} where the tables go")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
