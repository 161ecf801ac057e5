"""The toolchain, latency and checker tables of the docs, made from the committed JSON
(docs/bench-data/), and the helpers every section shares (bench/tables.py runs them).

Each function takes nothing and returns the Markdown of its section: one caption per file
(its name, when it ran, the commit and the load average where the run recorded them) and the
table its figures make. A figure a run did not record is "not recorded", never filled in."""

from __future__ import annotations

import json
import statistics
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
    return f"`{path.relative_to(REPO)}`: {at}, commit {commit}, {what}, {loads(run)}.{note}"


def _runs(pattern: str) -> list[tuple[Path, dict[str, Any]]]:
    return [(p, json.loads(p.read_text("utf-8"))) for p in sorted(DATA.glob(pattern))]


def _s(value: float | None, digits: int = 2) -> str:
    return "not recorded" if value is None else f"{value:.{digits}f}"


def _ms(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


# --- MCP latency (bench/latency/mcp_latency.py) ---------------------------------------


def _target(text: str) -> str:
    """`<= 1.0616116239174176` as `≤ 1.06`."""
    op, _, number = text.partition(" ")
    try:
        value = f"{float(number):.2f}".rstrip("0").rstrip(".")
    except ValueError:
        return text
    symbol = {"<=": "≤", ">=": "≥"}.get(op, op)
    return f"{symbol} {value}"


def mcp_table(path: Path, run: dict[str, Any]) -> str:
    floor = run["floor_bash"]
    rows = [["bash -c (floor)", _ms(floor["median_ms"]), _ms(floor["p90_ms"]), "", "", ""]]
    for s in run["servers"]:
        name = f"{s['name']} {s.get('version', '')}".strip()
        if s["status"] != "ok":
            rows.append([name, s["status"], s.get("reason", "")[:80], "", "", ""])
            continue
        lat, big = s["latency"], s.get("big_output") or {}
        bytes_ = (
            f"{big['text_bytes']:,} + {big['structured_bytes']:,} = {big['total_bytes']:,}"
            + ("" if big.get("has_last_line") else ", last line cut")
            if big
            else "not measured"
        )
        spread = big.get("repeats_total_bytes") or []
        if spread and min(spread) != max(spread):
            bytes_ += f" (repeats {min(spread):,}–{max(spread):,})"
        rows.append(
            [
                name,
                _ms(lat["median_ms"]),
                _ms(lat["p90_ms"]),
                _ms(lat["min_ms"]),
                f"{s['connect_ms']:,.0f}",
                bytes_,
            ]
        )
    ratios = "; ".join(
        f"{k.replace('_', ' ')} {v['ratio']:.2f}× (target {_target(v['target'])}: "
        f"{'met' if v['met'] else 'not met'})"
        for k, v in run["ratios"].items()
        if v.get("ratio") is not None
    )
    head = ["server", "p50 ms", "p90", "min", "connect ms", f"`{run['big_command']}` bytes"]
    what = f"{run['iterations']} interleaved calls each after {run['warmup']} warm-up"
    cmd = run.get("command", "")
    return "\n".join(
        [caption(path, run, what) + (f" `{cmd}`" if cmd else ""), "", *md(head, rows), "", ratios]
    )


def mcp_peer_tables() -> str:
    return "\n\n".join(mcp_table(p, r) for p, r in _runs("mcp_latency_peers-*.json"))


def mcp_hot_path_tables() -> str:
    return "\n\n".join(mcp_table(p, r) for p, r in _runs("mcp_latency_shell_hot_path-*.json"))


def mcp_prestart_table() -> str:
    """One row per run of the prestarted-wrapper series: habitat against the peer (and the
    baseline checkout, when it was in the rotation)."""
    rows = []
    series = _runs("mcp_latency_prestart-*.json")
    for path, run in sorted(series, key=lambda pr: str(pr[1]["generated_at"])):
        by = {s["name"]: s for s in run["servers"] if s["status"] == "ok"}

        def p50_90(name: str, by: dict[str, Any] = by) -> str:
            if name not in by:
                return ""
            lat = by[name]["latency"]
            return f"{lat['median_ms']:.1f} / {lat['p90_ms']:.1f}"

        ratio = run["ratios"]["habitat_vs_mcp_shell_server"]["ratio"]
        base = run["ratios"]["habitat_vs_baseline"]["ratio"]
        rows.append(
            [
                f"`{path.stem.removeprefix('mcp_latency_prestart-')}`, {run['generated_at']}",
                p50_90("habitat"),
                p50_90("habitat-baseline"),
                p50_90("mcp-shell-server"),
                f"{ratio:.2f}×" if ratio else "",
                f"{base:.2f}×" if base else "",
                f"{run['host']['loadavg_at_end'][0]:.1f}",
            ]
        )
    head = [
        "run (docs/bench-data/mcp_latency_prestart-…)",
        "habitat p50 / p90 ms",
        "baseline (main c10c899) p50 / p90",
        "mcp-shell-server p50 / p90",
        "habitat / mcp-shell-server (target ≤ 0.6×)",
        "habitat / baseline",
        "load at the end",
    ]
    return "\n".join(md(head, rows))


# --- CLI latency (bench/latency/cli_latency.py) -----------------------------------------


def cli_table(path: Path, run: dict[str, Any]) -> str:
    targets = run.get("targets", {})
    rows = []
    for name, r in run["results"].items():
        t = targets.get(name, {})
        verdict = t.get("verdict") or ("met" if t.get("met") else "not met" if t else "")
        ci = r.get("ci_ms")
        rows.append(
            [
                name,
                f"{r['median_ms']:,.0f}" + (f" ({ci[0]:,.0f}–{ci[1]:,.0f})" if ci else ""),
                f"{r['p90_ms']:,.0f}",
                f"{r['vs_python']:.1f}×" if r.get("vs_python") else "",
                t.get("target", ""),
                verdict,
            ]
        )
    what = f"{run['iterations']} interleaved rounds, `python -c pass` {run['python_ms']:.0f} ms"
    head = ["path", "median ms (95 % CI)", "p90", "vs python", "target", "verdict"]
    return "\n".join([caption(path, run, what), "", *md(head, rows)])


def cli_tables(pattern: str) -> str:
    return "\n\n".join(cli_table(p, r) for p, r in _runs(pattern))


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
    for path, run in _runs("ladder_harness_rust-*.json"):
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
    ]
    rows = []
    for path, run in _runs("ladder_harness_node-*.json"):
        for p in run["projects"]:
            full = [r["full_wall_s"] for r in p["rows"] if r.get("full_wall_s")]
            full_median = statistics.median(full) if full else None
            verdict = p["verify_wall_median_s"]
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
        "host / full (of medians)",
        "load (median)",
    ]
    rows = []
    for path, run in _runs("go_ladder_harness-*.json"):
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
    out = []
    for path, run in _runs("ladder_harness_user_flow-*.json"):
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
        what = f"seed {run['seed']}, {run['mutations_per_project']} mutations per project"
        out.append("\n".join([caption(path, run, what), "", *md(head, rows)]))
    return "\n\n".join(out)


def checker_tables() -> str:
    head = [
        "tool",
        "ours p50 ms (request → verdict)",
        "the tool's CLI p50 ms, same rounds",
        "ours / CLI",
        "warm",
        "same findings as the CLI",
    ]
    out = []
    for path, run in _runs("ladder_harness_checkers-*.json"):
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
        what = f"{max(len(r['rounds']) for r in run['results'])} rounds"
        out.append("\n".join([caption(path, run, what), "", *md(head, rows)]))
    return "\n\n".join(out)


def over_2x_table() -> str:
    """Every edit (second on) whose selection was over 2× testmon's, in the held-out and wide
    runs of 2026-12-06: where it was, both selections, and whether testmon missed a break."""
    rows = []
    for path, run in _runs("ladder_harness-2026-12-06-*.json"):
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


# --- small latencies without a peer (bench/latency/substrate.py, stale_latency.py) ------


def substrate_tables() -> str:
    out = []
    for path, run in _runs("substrate-*.json"):
        rows = [
            [case, f"{r['p50_ms']:.2f}", f"{r['p95_ms']:.2f}", f"{r['max_ms']:.2f}"]
            for case, r in run["results"].items()
        ]
        verdict = "met" if run["target_met"] else "not met"
        what = f"{run['iterations']} each, {run['ports']} port(s)"
        out.append(
            "\n".join(
                [
                    caption(path, run, what),
                    "",
                    *md(["case", "p50 ms", "p95", "max"], rows),
                    "",
                    f"Creation p95 ≤ {run['target_p95_ms']:g} ms: {verdict}.",
                ]
            )
        )
    return "\n\n".join(out)


def stale_tables() -> str:
    out = []
    for path, run in _runs("stale_latency-*.json"):
        row = [f"{run[k]:.1f}" for k in ("p50_ms", "p95_ms", "min_ms", "max_ms")]
        verdict = "met" if run["target_met"] else "not met"
        row.append(f"p50 ≤ {run['target_p50_ms']:g} ms: {verdict}")
        what = f"{run['iterations']} writes"
        head = ["p50 ms", "p95", "min", "max", "target"]
        out.append("\n".join([caption(path, run, what), "", *md(head, [row])]))
    return "\n\n".join(out)


def answer_bytes_tables() -> str:
    """Bytes per answer as they reach the client (bench/answer_bytes.py): one column per
    server, "total (what the model reads)", and the ratio to the leanest peer."""
    out = []
    for path, run in _runs("answer_bytes-*.json"):
        servers = [s["server"] for s in run["servers"]]
        jobs: dict[str, dict[str, str]] = {}
        for s in run["servers"]:
            for a in s["answers"]:
                cell = (
                    f"{a['total_bytes']:,} ({a['model_bytes']:,})"
                    if a["status"] == "done"
                    else a.get("reason") or a["status"]
                )
                jobs.setdefault(a["job"], {})[s["server"]] = cell
        rows = []
        for job, cells in jobs.items():
            r = run["ratios"].get(job, {})
            ratio = f"{r['ratio']:.2f}× {r['leanest_peer']}" if r.get("ratio") else ""
            rows.append([job, *(cells.get(s, "") for s in servers), ratio])
        head = ["answer", *(f"{s} bytes (model reads)" for s in servers), "habitat / leanest"]
        peers = ", ".join(f"{k} {v}" for k, v in run["peers"].items())
        out.append("\n".join([caption(path, run, peers), "", *md(head, rows)]))
    return "\n\n".join(out)
