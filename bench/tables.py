"""The tables of docs/benchmarks.md and bench/README.md, made from committed JSON.

    .venv/bin/python bench/tables.py [--write]

One section per kind of run, each with its files and its place in the doc:

* `ladder`: every `ladder_harness-*.json` whose projects carry `summary.tails`
  (bench/ladder/ladder_harness.py since the held-out seeds);
* `scoped`: `ladder_harness_scoped-*.json` with like-for-like ratios (warm / warm, fresh /
  fresh; bench/ladder/ladder_harness_scoped.py);
* `warm`: `ladder_harness_warm-*.json`, compile.project against the dmypy peer in-process
  (bench/ladder/ladder_harness_warm.py);
* `first-usable`: `cli_latency-*-first-usable.json`, the first `tools/list` answer
  (bench/latency/cli_latency.py --only mcp);
* the rest (`SECTIONS` below): the toolchains, the user's flow, the warm checkers and the
  edits over 2× (tables_runs.py), the MCP servers, the CLI, answer sizes, agent jobs, scene
  under load, verify's waits, the substrate and the stale event (tables_latency.py), each
  from the files its bench writes with `--out docs/bench-data/NAME-DATE.json`.

It prints every section; `--write` puts each into docs/benchmarks.md or bench/README.md (or
both) between `<!-- NAME-tables:begin -->` and `<!-- NAME-tables:end -->`; a section no file
places is an error. No table of figures may stand outside those blocks (a table of names
goes under a `<!-- table: no figures -->` line): tests/core/test_bench_tables.py checks both
that and that every block is what its data makes."""

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

from tables_latency import (  # noqa: E402
    agent_jobs_tables,
    answer_bytes_tables,
    cli_tables,
    mcp_answers_once_tables,
    mcp_bridge_handoff_tables,
    mcp_hot_path_tables,
    mcp_intake_tables,
    mcp_peer_tables,
    mcp_prestart_table,
    mcp_series_table,
    scene_tables,
    stale_tables,
    substrate_tables,
    verify_hop_tables,
    verify_latency_tables,
)
from tables_runs import (  # noqa: E402
    caption,
    checker_tables,
    comment_host_tables,
    first_verify_tables,
    go_tables,
    md,
    node_tables,
    node_tools_table,
    oneshot_tables,
    over_2x_table,
    per_run,
    rust_tables,
    rust_user_flow_tables,
    rust_workspace_table,
    user_flow_tables,
)

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


def scoped_tables() -> str:
    from ladder_harness_scoped import HEAD, rows_of

    out = []
    for path in sorted(DATA.glob("ladder_harness_scoped-*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        what = (
            f"seed {run['seed']}, {run['mutations_per_project']} mutations per project, "
            f"project venvs `{Path(run['python']).name}`"
        )
        lines = [caption(path, run, what), "", *md(HEAD, rows_of(run["projects"]))]
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
        rows += _diagnose_rows(run["diagnose"]["rounds"])
        what = f"{len(c)} rounds"
        head = ["measure", "ms: p50 (95 % CI) / p90", "target", "verdict"]
        out.append("\n".join([caption(path, run, what), "", *md(head, rows)]))
    return "\n\n".join(out)


def _diagnose_rows(d: list[dict[str, Any]]) -> list[list[str]]:
    """diagnose.files on the combined project next to plain `ruff check FILE` in the same
    rounds, and what a verify costs beyond its rungs (ladder_harness_warm.py without
    `--compile-only`)."""
    if not d:
        return []
    from _report import median_ci, verdict

    def cell(key: str) -> str:
        values = [r[key] * 1000 for r in d]
        low, high = median_ci(values)
        ordered = sorted(values)
        p90 = ordered[max(0, -(-9 * len(ordered) // 10) - 1)]
        return f"{statistics.median(values):.0f} ({low:.0f}–{high:.0f}) / {p90:.0f}"

    def ms(key: str) -> list[float]:
        return [r[key] * 1000 for r in d]

    return [
        [
            "diagnose.files end to end (one touched file)",
            cell("wall_s"),
            "≤ 150",
            verdict(ms("wall_s"), 150.0),
        ],
        ["`ruff check --select F,E9 FILE`, same file and rounds (peer)", cell("ruff_s"), "", ""],
        [
            "verify overhead beyond rungs, diagnose rounds",
            cell("overhead_s"),
            "≤ 150",
            verdict(ms("overhead_s"), 150.0),
        ],
    ]


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
        out.append("\n".join([caption(path, run, what), "", *md(head, rows)]))
    return "\n\n".join(out)


def steady_tables() -> str:
    """Edit -> verdict through a warm host from the third edit on, before / after interleaved
    per round, next to testmon and the full suite (bench/ladder/ladder_steady.py)."""
    from ladder_steady import HEAD as STEADY
    from ladder_steady import rows

    return per_run(
        "ladder_steady-*.json",
        STEADY,
        lambda path, run: (
            f"seed {run['seed']}, {len(run['projects'][0]['rounds'])} rounds interleaved, "
            f"baseline `{run['baseline_src']}`",
            [row for p in run["projects"] for row in rows(p)],
        ),
    )


SECTIONS = {
    "ladder": ladder_tables,
    "scoped": scoped_tables,
    "warm": warm_tables,
    "first-usable": first_usable_tables,
    "user-flow": user_flow_tables,
    "checkers": checker_tables,
    "rust": rust_tables,
    "node": node_tables,
    "go": go_tables,
    "cli-light": lambda: cli_tables("cli_latency-*-light.json"),
    "cli-terminal": lambda: cli_tables("cli_latency-*-terminal.json"),
    "cli-c-modules": lambda: cli_tables("cli_latency-*-c-modules.json"),
    "cli-verbs": lambda: cli_tables("cli_latency-*-verbs.json"),
    "cli-bridge": lambda: cli_tables("cli_latency-*-bridge*.json"),
    "cli-commands": lambda: cli_tables("cli_latency-*-commands-*.json"),
    "cli-quiet": lambda: cli_tables("cli_latency-*-quiet-*.json"),
    "cli-no-host-run": lambda: cli_tables("cli_latency-*-no-host-run.json"),
    "cli-status-no-host": lambda: cli_tables("cli_latency-*-status-no-host*.json"),
    "cli-project-no-host": lambda: cli_tables("cli_latency-*-project-trust-no-host.json"),
    "mcp-peers": mcp_peer_tables,
    "mcp-bridge-handoff": mcp_bridge_handoff_tables,
    "mcp-answers-once": mcp_answers_once_tables,
    "mcp-intake": mcp_intake_tables,
    "mcp-hot-path": mcp_hot_path_tables,
    "mcp-prestart": mcp_prestart_table,
    "mcp-end-later": lambda: mcp_series_table("mcp_latency_end_later", "main ea7e7bf"),
    "mcp-disk-waits": lambda: mcp_series_table("mcp_latency_disk_waits", "main 08b5489"),
    "over-2x": over_2x_table,
    "answer-bytes": answer_bytes_tables,
    "substrate": substrate_tables,
    "stale": stale_tables,
    "agent-jobs": agent_jobs_tables,
    "scene": lambda: scene_tables("scene_load-*.json"),
    "scene-host": lambda: scene_tables("scene_host_load-*.json"),
    "verify-latency": verify_latency_tables,
    "verify-hop": verify_hop_tables,
    "oneshot": oneshot_tables,
    "comment-host": comment_host_tables,
    "first-verify": first_verify_tables,
    "steady": steady_tables,
    "node-tools": node_tools_table,
    "rust-workspace": rust_workspace_table,
    "rust-user-flow": rust_user_flow_tables,
}
# Where the tables go: a section's markers may be in either file, or in both.
DOCS = (DOC, REPO / "bench" / "README.md")
NO_FIGURES = "<!-- table: no figures -->"


def tables() -> dict[str, str]:
    return {name: make() for name, make in SECTIONS.items()}


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}-tables:begin -->", f"<!-- {name}-tables:end -->"


def put(doc: str, name: str, text: str) -> str:
    """`doc` with the block of section `name` (if it holds its markers) set to `text`."""
    begin, end = _markers(name)
    if begin not in doc or end not in doc:
        return doc
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{text}\n{end}{tail}"


def written(made: dict[str, str]) -> dict[Path, str]:
    """Every doc with its sections' blocks set; a section no doc places is an error."""
    docs = {path: path.read_text(encoding="utf-8") for path in DOCS}
    for name, text in made.items():
        begin, end = _markers(name)
        if not any(begin in doc and end in doc for doc in docs.values()):
            raise SystemExit(f"add the markers {begin} and {end} where the tables go")
        docs = {path: put(doc, name, text) for path, doc in docs.items()}
    return docs


def loose_tables(doc: str) -> list[int]:
    """The line numbers of Markdown tables outside every generated block, except those
    right under a `<!-- table: no figures -->` line (a table of names, not measurements)."""
    loose, inside, previous, in_table = [], False, "", False
    for number, line in enumerate(doc.splitlines(), 1):
        if line.startswith("<!-- ") and line.endswith("-tables:begin -->"):
            inside = True
        elif line.startswith("<!-- ") and line.endswith("-tables:end -->"):
            inside = False
        row = line.lstrip().startswith("|")
        if row and not in_table and not inside and previous.strip() != NO_FIGURES:
            loose.append(number)
        in_table, previous = row, line
    return loose


def _check(made: dict[str, str]) -> int:
    """What `make check` runs: 1 (and why) when a doc's tables are not what the data makes."""
    bad = []
    for path, doc in written(made).items():
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(REPO)
        if text != doc:
            bad.append(f"{rel}: a generated block differs from its data")
        bad += [f"{rel}:{n}: a table outside the generated blocks" for n in loose_tables(text)]
    for line in bad:
        print(line, file=sys.stderr)
    if bad:
        print(
            "tables come from docs/bench-data/ (issue 24): commit the run's JSON (`--out`), give "
            "it a section in bench/tables.py and its markers in the doc, then run "
            "`.venv/bin/python bench/tables.py --write`",
            file=sys.stderr,
        )
    return 1 if bad else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write", action="store_true", help="into docs/benchmarks.md and bench/README.md"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a block differs from its data or a table stands outside one",
    )
    args = parser.parse_args()
    made = tables()
    if args.check:
        raise SystemExit(_check(made))
    if not args.write:
        print("\n\n".join(f"## {name}\n\n{text}" for name, text in made.items()))
        return
    for path, doc in written(made).items():
        path.write_text(doc, encoding="utf-8")


if __name__ == "__main__":
    main()
