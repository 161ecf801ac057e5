"""The toolchain, latency and checker tables of the docs, made from the committed JSON
(docs/bench-data/), and the helpers every section shares (bench/tables.py runs them).

Each function takes nothing and returns the Markdown of its section: one caption per file
(its name, when it ran, the commit and the load average where the run recorded them) and the
table its figures make. A figure a run did not record is "not recorded", never filled in."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "docs" / "bench-data"


def md(head: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def loads(run: dict[str, Any]) -> str:
    """The 1-min load average before → after the run, or what of it the run recorded."""
    before = run.get("load_before") or run.get("load_average_before")
    after = run.get("load_after") or run.get("load_average")
    after = after or (run.get("host") or {}).get("loadavg_at_end")
    if before and after:
        return f"load {before[0]:.1f} → {after[0]:.1f} (1-min averages, before → after)"
    if after:
        return f"load {after[0]:.1f} at the end (1-min average; not recorded at the start)"
    return "load not recorded"


def caption(path: Path, run: dict[str, Any], what: str) -> str:
    at = run.get("at") or run.get("generated_at") or "time not recorded"
    commit = run.get("commit", "")[:7] or "not recorded"
    note = f" {run['note'].rstrip('.')}." if run.get("note") else ""
    cpus = (run.get("machine") or run.get("host") or {}).get("cpus")
    on = f" on {cpus} CPUs" if cpus else ""
    return f"`{path.relative_to(REPO)}`: {at}, commit {commit}, {what}, {loads(run)}{on}.{note}"


def runs(pattern: str) -> list[tuple[Path, dict[str, Any]]]:
    return [(p, json.loads(p.read_text("utf-8"))) for p in sorted(DATA.glob(pattern))]


def per_run(
    pattern: str,
    head: list[str],
    table: Callable[[Path, dict[str, Any]], tuple[str, list[list[str]]]],
) -> str:
    """One captioned table per run file matching `pattern`; `table` gives the caption's
    middle part (what the run was) and the rows."""
    out = []
    for path, run in runs(pattern):
        what, rows = table(path, run)
        out.append("\n".join([caption(path, run, what), "", *md(head, rows)]))
    return "\n\n".join(out)


def _s(value: float | None, digits: int = 2) -> str:
    return "not recorded" if value is None else f"{value:.{digits}f}"


# --- toolchains -------------------------------------------------------------------------


def _code(path: Path) -> str:
    """before / fused / after from a file name of a before-and-after series."""
    for word in ("before", "fused", "after"):
        if f"-{word}-" in path.name:
            return word
    return path.stem.rsplit("-", 1)[-1]


def rust_tables() -> str:
    head = [
        "project",
        "run",
        "mutations",
        "caught by full suite",
        "misses",
        "false reds",
        "tests in test.scoped (median) of the suite",
        "verdict through the warm host, median / max s",
        "one-shot, median s",
        "full suite after the edit, median s",
        "host / full (of medians)",
        "load (median)",
    ]
    rows = []
    for path, run in runs("ladder_harness_rust-*.json"):
        for s in run["summaries"]:
            rows.append(
                [
                    s["project"],
                    f"`{path.stem.removeprefix('ladder_harness_rust-')}`",
                    str(s["mutations"]),
                    str(s["caught_by_full"]),
                    str(s["misses"]),
                    str(s["false_reds"]),
                    f"{s['scoped_tests_median']:g} of {s['full_tests']}",
                    f"{_s(s['verify_median_s'])} / {_s(s['verify_max_s'])}",
                    _s(s.get("oneshot_median_s")),
                    _s(s["full_median_s"]),
                    f"{s['verify_median_s'] / s['full_median_s']:.2f}",
                    _s(s.get("load_median"), 0),
                ]
            )
    return "\n".join(md(head, rows))


def node_tables() -> str:
    head = [
        "project",
        "run",
        "runner",
        "mutations",
        "caught by full / ladder",
        "misses",
        "false reds",
        "scoped tests (median) / suite",
        "edit→verdict through the host, median s",
        "full suite, median s",
        "verdict / full",
        "first verify after the host start / its suite",
        "load",
    ]
    rows = []
    for path, run in runs("ladder_harness_node-*.json"):
        for p in run["projects"]:
            full = [r["full_wall_s"] for r in p["rows"] if r.get("full_wall_s")]
            full_median = statistics.median(full) if full else None
            verdict = p["verify_wall_median_s"]
            first = p["rows"][0] if p["rows"] else {}
            first_ratio = (
                f"{first['verify_wall_s']:.0f} / {first['full_wall_s']:.0f} s"
                if first.get("verify_wall_s") and first.get("full_wall_s")
                else ""
            )
            rows.append(
                [
                    f"{p['project']} {p['version']}",
                    f"`{path.stem.removeprefix('ladder_harness_node-')}`",
                    p["runner"],
                    str(p["mutations"]),
                    f"{p['caught_by_full']} / {p['caught_by_ladder']}",
                    str(p["misses"]),
                    str(p["false_reds"]),
                    f"{p['scoped_tests_median']:g} / {p['full_tests']}",
                    _s(verdict),
                    _s(full_median),
                    f"{verdict / full_median:.2f}" if full_median else "",
                    first_ratio,
                    "–".join(f"{x:.0f}" for x in p["load"]) if p.get("load") else "",
                ]
            )
    return "\n".join(md(head, rows))


def _go_row(p: dict[str, Any]) -> dict[str, Any]:
    ms = p["mutations"]

    def med(key: str) -> float | None:
        values = [m[key] for m in ms if m.get(key) is not None]
        return statistics.median(values) if values else None

    return {
        "caught": sum(1 for m in ms if m.get("full_new_failures")),
        "misses": sum(1 for m in ms if m.get("miss")),
        "false_reds": sum(1 for m in ms if m.get("false_red")),
        "own_misses": sum(1 for m in ms if m.get("own_mode_miss")),
        "scoped": statistics.mean(
            m["scoped_packages"] for m in ms if m.get("scoped_packages") is not None
        ),
        "verify": med("verify_wall_s"),
        "oneshot": med("oneshot_wall_s"),
        "full": med("full_wall_s"),
        "own": med("own_wall_s"),
        "load": med("load"),
    }


def go_tables() -> str:
    head = [
        "project",
        "run",
        "mutations",
        "caught by full suite",
        "misses",
        "false reds",
        "touched-package-only misses",
        "scoped packages (mean) / with tests",
        "verdict through the warm host, median s",
        "one-shot, median s",
        "full suite, median s",
        "touched package alone, median s",
        "host / full (of medians)",
        "load (median)",
    ]
    rows = []
    for path, run in runs("go_ladder_harness-*.json"):
        for p in run["projects"]:
            r = _go_row(p)
            rows.append(
                [
                    f"{p['project']} {p['version']}",
                    f"`{path.stem.removeprefix('go_ladder_harness-')}`",
                    str(len(p["mutations"])),
                    str(r["caught"]),
                    str(r["misses"]),
                    str(r["false_reds"]),
                    str(r["own_misses"]),
                    f"{r['scoped']:.1f} / {p['packages_with_tests']}",
                    _s(r["verify"]),
                    _s(r["oneshot"]),
                    _s(r["full"]),
                    _s(r["own"]),
                    f"{r['verify'] / r['full']:.2f}" if r["verify"] and r["full"] else "",
                    _s(r["load"], 0),
                ]
            )
    return "\n".join(md(head, rows))


# --- the Python ladder: the user's flow, the warm checkers ------------------------------


def user_flow_tables() -> str:
    head = [
        "project",
        "via",
        "misses / false reds",
        "median selected ours / testmon",
        "ratio p90 / max / over 2×",
        "wall s ours / full / testmon",
    ]

    def table(path: Path, run: dict[str, Any]) -> tuple[str, list[list[str]]]:
        rows = []
        for p in run["projects"]:
            s = p["summary"]
            rows.append(
                [
                    p["project"],
                    run["via"],
                    f"{s['misses']} / {s['false_reds']}",
                    f"{s['second_on_median_selected']:g} / "
                    f"{s['second_on_testmon_median_selected']:g}",
                    f"{s['ratio_p90']:g} / {s['ratio_max']:g} / {s['over_2x']} "
                    f"(of {s['from_second_edit']})",
                    f"{s['second_on_wall_median_s']:.2f} / {s['second_on_full_median_s']:.2f}"
                    f" / {s['second_on_testmon_median_s']:.2f}",
                ]
            )
        return f"seed {run['seed']}, {run['mutations_per_project']} mutations per project", rows

    return per_run("ladder_harness_user_flow-*.json", head, table)


def checker_tables() -> str:
    head = [
        "tool",
        "ours p50 ms (request → verdict)",
        "the tool's CLI p50 ms, same rounds",
        "ours / CLI",
        "warm",
        "same findings as the CLI",
    ]

    def table(path: Path, run: dict[str, Any]) -> tuple[str, list[list[str]]]:
        rows = []
        for r in run["results"]:
            rounds = r["rounds"]
            ours = statistics.median(x["wall_s"] for x in rounds) * 1000
            cli = statistics.median(x["cli_s"] for x in rounds) * 1000
            rows.append(
                [
                    r["tool"],
                    f"{ours:,.0f}",
                    f"{cli:,.0f}",
                    f"{ours / cli:.2f}",
                    f"{sum(1 for x in rounds if x.get('warm'))}/{len(rounds)}",
                    f"{sum(1 for x in rounds if x.get('identical'))}/{len(rounds)}",
                ]
            )
        return f"{max(len(r['rounds']) for r in run['results'])} rounds", rows

    return per_run("ladder_harness_checkers-*.json", head, table)


def over_2x_table() -> str:
    """Every edit (second on) whose selection was over 2× testmon's, in the held-out and wide
    runs of 2026-12-06: where it was, both selections, and whether testmon missed a break."""
    rows = []
    for path, run in runs("ladder_harness-2026-12-06-*.json"):
        for p in run["projects"]:
            edits = p["mutations"][1:]
            over = [m for m in edits if m["ours_selected"] / max(m["testmon_selected"], 1) > 2]
            where = ", ".join(
                f"`{m['mutation']}` ({m['ours_selected']} / {m['testmon_selected']})" for m in over
            )
            missed = sum(1 for m in over if m.get("testmon_miss"))
            rows.append(
                [
                    f"{p['project']} (`{path.stem.removeprefix('ladder_harness-')}`)",
                    f"{len(over)} / {len(edits)}",
                    where or "none",
                    str(missed),
                ]
            )
    head = ["project", "over 2× (of edits)", "where (ours / testmon selected)", "testmon missed"]
    return "\n".join(md(head, rows))


def oneshot_tables() -> str:
    """One-shot verify before / after, interleaved per edit (bench/ladder/ladder_oneshot.py)."""
    from ladder_oneshot import summary

    head = [
        "project",
        "edits",
        "median wall s: before / after / full",
        "median verdict s: before / after",
        "median CPU s: before / after / full",
        "after / before per edit: median (p10, max)",
        "one-shot − full s: before / after",
        "misses before / after",
        "verdicts differ",
        "after ≤ full + 1 s",
    ]
    return per_run(
        "ladder_oneshot-*.json",
        head,
        lambda path, run: (
            f"seed {run['seed']}, baseline `{run['baseline']}`, "
            + {"steady": "from the second edit", "first": "flow first: every edit"}.get(
                run.get("flow", "steady"), "flow new-project: from the run's second edit"
            ),
            [summary(p, run.get("flow", "steady")) for p in run["projects"]],
        ),
    )


def comment_host_tables() -> str:
    """The comment-only edit through a warm host, with and without the CLI's bytecode
    (bench/ladder/ladder_comment_host.py)."""
    from ladder_comment_host import rows

    head = [
        "project",
        "CLI",
        "n",
        "wall s median / max",
        "the host's own wall s (`timing.wall_s`)",
        "the CLI adds s",
        "≤ 300 ms",
        "states",
    ]
    return per_run(
        "ladder_comment_host-*.json",
        head,
        lambda path, run: (
            "interleaved per sample",
            [row for p in run["projects"] for row in rows(p)],
        ),
    )


def first_verify_tables() -> str:
    """The first edits after a host opened the project, before / after, next to plain pytest
    (bench/ladder/ladder_first_verify.py)."""
    from ladder_first_verify import HEAD, rows

    return per_run(
        "ladder_first_verify-*.json",
        HEAD,
        lambda path, run: (
            f"seed {run['seed']}, {len(run['projects'][0]['rounds'])} rounds interleaved, "
            f"baseline `{run['baseline_src']}`"
            + (
                f", {run['think_s']:g} s from a verdict to the next edit (the peers timed "
                "afterwards, the host stopped)"
                if run.get("think_s") is not None
                else ""
            ),
            [row for p in run["projects"] for row in rows(p)],
        ),
    )


def _first_rounds(s: dict[str, Any], first: list[float]) -> str:
    if "first_habitat_median_s" not in s:  # one host's round 1 only (before --first)
        return f"{first[0]:.1f} / {first[1]:.1f}"
    return f"{s['first_habitat_median_s']:.1f} / {s['first_peer_median_s']:.1f} (median)"


def _first_ratios(s: dict[str, Any]) -> str:
    if "first_ratio_median" not in s:
        return "—"
    return f"{s['first_ratio_median']:.2f}×, {s['first_ratio_max']:.2f}× ({s['first_rounds']})"


def node_tools_table() -> str:
    """Each Node rung through a warm host against the tool by hand, interleaved per round
    (bench/ladder/node_warm_tools.py): round 1 apart (with --first, on several fresh hosts),
    medians over the rounds after it."""
    head = [
        "project",
        "rung",
        "peer (by hand)",
        "round 1, habitat / peer s",
        "round 1 ratio: median, max (fresh hosts)",
        "habitat, median s",
        "peer, median s",
        "ratio (median of per-round ratios)",
        "warm",
        "commit, load before → after",
    ]
    rows = []
    for _, run in runs("node_warm_tools-*.json"):
        later = len(run["rows"]) - 1
        for s in run["summary"]:
            first = s["first_round_s"]
            rows.append(
                [
                    f"{run['project']} {run['version']}",
                    s["rung"],
                    f"`{s['peer']}`",
                    _first_rounds(s, first),
                    _first_ratios(s),
                    f"{s['habitat_median_s']:.2f}",
                    f"{s['peer_median_s']:.2f}",
                    f"{s['ratio_median']:.2f}×",
                    f"{s['warm_rounds']}/{later}" if s["warm_rounds"] else "—",
                    f"{run['commit'][:7]}, {run['load_before'][0]:.1f} → "
                    f"{run['load_after'][0]:.1f}",
                ]
            )
    return "\n".join(md(head, rows))


def rust_workspace_table() -> str:
    """The Rust ladder on a workspace (ladder_harness_rust.py --projects url): per run, and
    per mutated crate the median of host / full per mutation, each crate's first climb left
    out (it builds clippy-driver's units of that crate from nothing)."""
    files = runs("ladder_harness_rust-url-*.json")
    crates = sorted(
        {m["mutation"].split("/", 1)[0] for _, r in files for m in r["projects"][0]["mutations"]}
    )
    head = [
        "run",
        "caught by full",
        "ladder red (summary)",
        "climbs ending `error`",
        "misses",
        "false reds",
        "host / full, of medians",
        *(f"{c} mutations: host / full per mutation, median" for c in crates),
        "load (median)",
    ]
    rows = []
    for path, run in files:
        s = run["summaries"][0]
        ms = run["projects"][0]["mutations"]
        errors = sum(1 for m in ms if m["ladder_state"] == "error")
        per_crate = []
        for crate in crates:
            mine = [m for m in ms if m["mutation"].startswith(f"{crate}/")][1:]
            ratios = [m["verify_s"] / m["full_s"] for m in mine if m.get("full_s")]
            per_crate.append(f"{statistics.median(ratios):.2f}" if ratios else "")
        rows.append(
            [
                f"`{path.stem.removeprefix('ladder_harness_rust-')}`",
                str(s["caught_by_full"]),
                str(s["ladder_red"]),
                str(errors),
                str(s["misses"]),
                str(s["false_reds"]),
                f"{s['verify_median_s']:.2f} / {s['full_median_s']:.2f} s = "
                f"**{s['verify_median_s'] / s['full_median_s']:.2f}**",
                *per_crate,
                _s(s.get("load_median"), 0),
            ]
        )
    return "\n".join(md(head, rows))


def rust_user_flow_tables() -> str:
    """The Rust new-user flow (ladder_rust_user_flow.py): per run, project, edit and habitat
    CLI, the medians of the verdict, the user's own `cargo test` of the same edit, their
    ratio per edit, and the user's `cargo test` run after the verdict in the ladder's copy."""
    head = [
        "project",
        "edit",
        "habitat",
        "n",
        "verdicts",
        "verdict, median s",
        "cargo test, median s",
        "verdict / cargo test, median",
        "cargo test after the verdict, median s",
        "load (median)",
    ]

    def table(path: Path, run: dict[str, Any]) -> tuple[str, list[list[str]]]:
        habitats = ", ".join(f"{k} = `{v}`" for k, v in run["habitats"].items())
        rows = [
            [
                s["project"],
                str(s["edit"]),
                s["habitat"],
                str(s["n"]),
                s["states"],
                _s(s["verify_median_s"]),
                _s(s["cargo_test_median_s"]),
                f"**{s['ratio_median']:.2f}**",
                _s(s["after_median_s"]),
                _s(s["load_median"], 0),
            ]
            for s in run["summaries"]
        ]
        return f"seed {run['seed']}, habitat CLIs {habitats}", rows

    return per_run("ladder_rust_user_flow-*.json", head, table)
