"""The latency and answer-size tables of the docs (MCP servers, the CLI, the substrate, the
stale event, agent jobs, scene under load, verify's waits), made from the committed JSON
(docs/bench-data/); bench/tables.py runs them. Helpers shared with tables_runs.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tables_runs import caption, md, runs


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
    return "\n\n".join(mcp_table(p, r) for p, r in runs("mcp_latency_peers-*.json"))


def mcp_bridge_handoff_tables() -> str:
    return "\n\n".join(mcp_table(p, r) for p, r in runs("mcp_latency_bridge_handoff-*.json"))


def mcp_answers_once_tables() -> str:
    return "\n\n".join(mcp_table(p, r) for p, r in runs("mcp_latency_answers_once-*.json"))


def mcp_intake_tables() -> str:
    return "\n\n".join(mcp_table(p, r) for p, r in runs("mcp_latency-*-bridge-*.json"))


def mcp_hot_path_tables() -> str:
    return "\n\n".join(mcp_table(p, r) for p, r in runs("mcp_latency_shell_hot_path-*.json"))


def mcp_prestart_table() -> str:
    """One row per run of the prestarted-wrapper series: habitat against the peer (and the
    baseline checkout, when it was in the rotation)."""
    return mcp_series_table("mcp_latency_prestart", "main c10c899")


def mcp_series_table(prefix: str, baseline: str) -> str:
    """One row per run of `docs/bench-data/<prefix>-*.json`: habitat against the peer and
    the `baseline` checkout (when it was in the rotation), in the order they ran."""
    rows = []
    series = runs(f"{prefix}-*.json")
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
                f"`{path.stem.removeprefix(prefix + '-')}`, {run['generated_at']}",
                p50_90("habitat"),
                p50_90("habitat-baseline"),
                p50_90("mcp-shell-server"),
                f"{ratio:.2f}×" if ratio else "",
                f"{base:.2f}×" if base else "",
                f"{run['host']['loadavg_at_end'][0]:.1f}",
            ]
        )
    head = [
        f"run (docs/bench-data/{prefix}-…)",
        "habitat p50 / p90 ms",
        f"baseline ({baseline}) p50 / p90",
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
    if any("vs_baseline" in r for r in run["results"].values()):
        # A run with `--baseline`: what each row adds to `python -c pass`, and its median
        # over the same row's with the baseline's code.
        head[4:4] = ["added ms", "vs baseline"]
        for row, r in zip(rows, run["results"].values(), strict=True):
            added = f"{r['median_ms'] - run['python_ms']:+,.0f}" if r.get("vs_python") else ""
            vs = f"{r['vs_baseline']:.2f}×" if r.get("vs_baseline") else ""
            row[4:4] = [added, vs]
    return "\n".join([caption(path, run, what), "", *md(head, rows)])


def cli_tables(pattern: str) -> str:
    return "\n\n".join(cli_table(p, r) for p, r in runs(pattern))


# --- small latencies without a peer (bench/latency/substrate.py, stale_latency.py) ------


def substrate_tables() -> str:
    out = []
    for path, run in runs("substrate-*.json"):
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
    for path, run in runs("stale_latency-*.json"):
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
    for path, run in runs("answer_bytes-*.json"):
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


def agent_jobs_tables() -> str:
    """Calls and bytes per job and server (bench/agent_jobs.py), and each job's verdict."""
    out = []
    for path, run in runs("agent_jobs-*.json"):
        rows = []
        for r in run["runs"]:
            t = r["totals"]
            status = r["status"] + (f": {r['reason'][:60]}" if r["reason"] else "")
            rows.append(
                [
                    r["job"],
                    r["server"],
                    status,
                    str(t["calls"]),
                    f"{t['text_bytes']:,}",
                    f"{t['structured_bytes']:,}",
                    f"{t['total_bytes']:,}",
                    f"{t['model_bytes']:,}",
                ]
            )
        verdicts = []
        for job, v in run["verdicts"].items():
            if v.get("met", True) is None:
                verdicts.append(f"{job}: no verdict ({v['why']})")
                continue
            said = ", ".join(
                f"{what} {'met' if v[f'{what}_met'] else 'not met'}"
                for what in ("calls", "total_bytes", "model_bytes")
            )
            verdicts.append(f"{job}: ≤ the leanest peer's {said.replace('_', ' ')}")
        head = ["job", "server", "status", "calls", "text", "structured", "total", "model reads"]
        peers = ", ".join(f"{k} {v}" for k, v in run["peers"].items())
        out.append(
            "\n".join([caption(path, run, peers), "", *md(head, rows), "", "; ".join(verdicts)])
        )
    return "\n\n".join(out)


def scene_tables(pattern: str) -> str:
    """Latency under load per checkout (bench/latency/scene_load.py, scene_host_load.py):
    this checkout and the baseline measured alternately in one run."""
    out = []
    for path, run in runs(pattern):
        rows = []
        for name, keyed in run["checkouts"].items():
            for key, st in keyed.items():
                if "mean" in st:
                    rows.append([name, key, "", "", "", "", f"{st['mean']:.2f}"])
                    continue
                cells = [f"{st[k]:,.1f}" for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms")]
                rows.append([name, key, f"{int(st['calls']):,}", *cells, ""])
        base = f", baseline `{run['baseline']}`" if run.get("baseline") else ""
        what = (
            f"{run['tabs']} tabs writing, {run['clients']} callers, {run['seconds']:g} s a "
            f"phase{base}, target p99 ≤ {run['target_p99_ms']:g} ms"
        )
        head = ["checkout", "phase / verb", "calls", "p50 ms", "p90", "p99", "max", "mean"]
        out.append("\n".join([caption(path, run, what), "", *md(head, rows)]))
    return "\n\n".join(out)


def verify_latency_tables() -> str:
    """A lone request's start and the CLI's wall through a host, one-shot and plain pytest
    (bench/latency/verify_latency.py)."""
    out = []
    for path, run in runs("verify_latency-*.json"):
        lone = [
            [
                f"the call → {k.removesuffix('_ms').replace('_', ' ')}",
                f"{v['p50']:.1f}",
                f"{v['p90']:.1f}",
            ]
            for k, v in run["lone_request_ms"].items()
        ]
        met = "met" if run["first_rung_target_met"] else "not met"
        walls = [
            [k, f"{v['p50']:.2f}", f"{v['p90']:.2f}", f"{run['ratios_to_pytest'][k]:.2f}"]
            for k, v in run["cli_wall_s"].items()
        ]
        what = (
            f"{run['requests']} lone requests (policy {run['policy']}, coalesce window "
            f"{run['coalesce_window_ms']:g} ms), {run['rounds']} interleaved CLI rounds"
        )
        out.append(
            "\n".join(
                [
                    caption(path, run, what),
                    "",
                    *md(["lone request", "p50 ms", "p90"], lone),
                    "",
                    f"First rung ≤ {run['first_rung_target_ms']:g} ms after the call: {met}.",
                    "",
                    *md(["flow", "wall p50 s", "p90", "÷ pytest (p50)"], walls),
                ]
            )
        )
    return "\n\n".join(out)


# --- verify's wall around the rungs (bench/latency/verify_hop.py) ----------------------

_HOP_PARTS = ("to_queue", "to_first_rung", "rungs", "to_verdict", "to_exit", "wall_s")


def verify_hop_tables() -> str:
    """Per run: each habitat CLI's median of every part of a verify's wall (ms), the wall,
    its ratio to the first CLI's, and the load."""
    import statistics

    out = []
    for path, run in runs("verify_hop-*.json"):
        sides = run["verifies"]
        first = next(iter(sides))
        base = statistics.median(r["wall_s"] for r in sides[first])
        rows = []
        for name, got in sides.items():
            med = {p: statistics.median(r[p] for r in got) for p in _HOP_PARTS}
            rows.append(
                [
                    f"`{name}`",
                    *(_ms(med[p] * 1000) for p in _HOP_PARTS),
                    f"{med['wall_s'] / base:.2f}",
                    f"{statistics.median(r['load'] for r in got):.0f}",
                ]
            )
        head = [
            "habitat",
            "CLI start → queued",
            "→ first rung",
            "rungs",
            "→ verdict",
            "→ CLI exit",
            "wall",
            f"wall / `{first}`",
            "load (median)",
        ]
        what = f"{run['rounds']} rounds interleaved, medians in ms"
        out.append("\n".join([caption(path, run, what), "", *md(head, rows)]))
    return "\n\n".join(out)
