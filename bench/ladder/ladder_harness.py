"""The ladder on real projects: seeded single-line mutations, `habitat verify` against the
full suite, side by side with pytest-testmon (issue 9).

For each project (ladder_harness_projects.py): prepare it once (sdist → git → venv), run
the baseline full suite with plain pytest and `pytest --testmon` on a fresh database
(testmon's recording run). The habitat takes the flow a user takes (`--flow user`, the
default): a fresh state folder, no run by hand before the first edit — every test run the
ladder makes records dependency data, and a host records in the background once the first
verify has trusted the project. `--via host` (default) starts the workspace host first, as
`habitat mcp` does for an agent, so every verify goes through it; `--via oneshot` passes
`--no-host`; `--via both` runs each mutation's verify through the host and then one-shot,
interleaved (the host's result judges misses and false reds). `--flow ritual` is the old
flow: `habitat verify --rung test.full` first.
Then for each mutation, in turn, on a clean copy:

1. `habitat verify --policy standard --json` (this worktree's CLI); when it stops
   before `test.scoped`, also `--rung test.scoped` so every mutation measures selection;
2. the full suite (plain pytest, junit XML);
3. `pytest --testmon` against a copy of the baseline database (so runs do not feed each
   other), counting what it selected and what failed.

Through a host, after the mutations, a comment-only edit (a new comment line, each sample
its own text) is verified `--comment-samples` times, as a user would: `habitat verify`.

The seed defaults to today's date (YYYYMMDD, printed): held-out mutations, not the ones
the code was tuned on. `--out` also writes the JSON (with this repository's commit and the
load average before and after) where it can be committed (docs/bench-data/).

A miss: the full suite has a failure the baseline did not, and `test.scoped` was green.
A false red: the ladder is red but the red rungs found nothing the mutation caused (their
findings are all in the same rung's result on the clean tree for the same file, or
`test.scoped` failed while the full suite found nothing new).

    .venv/bin/python bench/ladder/ladder_harness.py [--projects attrs,packaging,click]
        [--mutations 30] [--seed YYYYMMDD] [--python python3.12] [--flow user|ritual]
        [--via host|oneshot|both] [--comment-samples 10] [--out docs/bench-data/X.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import anyio

from agent_habitat.verify import stop_type_daemon

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_bytecode import compile_habitat
from ladder_harness_comment import comment_edits
from ladder_harness_mutations import Mutation, apply, choose
from ladder_harness_projects import DEFAULT, PROJECTS, Project, prepare, reset, source_files
from ladder_harness_select import selection_time_ms
from ladder_harness_stats import tail_row, tails

from _report import RESULTS, print_table, write_json

REPO = Path(__file__).resolve().parents[2]
HABITAT = Path(sys.executable).parent / "habitat"
_COUNTS = re.compile(r"(\d+) (passed|failed|errors?|skipped|deselected|xfailed|xpassed)")


def _counts(text: str) -> dict[str, int]:
    tail = "\n".join(text.strip().splitlines()[-3:])
    out: dict[str, int] = {}
    for n, kind in _COUNTS.findall(tail):
        out[kind.rstrip("s") if kind.startswith("error") else kind] = int(n)
    return out


def _ran(counts: dict[str, int]) -> int:
    return sum(v for k, v in counts.items() if k != "deselected")


class Runner:
    def __init__(self, project: Project, root: Path, python: Path, home: Path) -> None:
        self.project, self.root, self.python, self.home = project, root, python, home
        self.env = {**os.environ, **project.pytest_env, "HABITAT_HOME": str(home)}
        self.env["HABITAT_LADDER_PYTHON"] = str(python)
        self.env.pop("PYTHONPATH", None)
        self.testmon_db = home / f"{project.name}.testmondata"
        self.limit_s = 600.0
        self.oneshot = False

    def host(self, action: str) -> None:
        """`habitat host start|stop` for the project, as `habitat mcp` starts one."""
        _, text = self._timed([str(HABITAT), "host", action, "--project", str(self.root)])
        print(f"[{self.project.name}] host {action}: {text.strip()[-200:]}", file=sys.stderr)

    def _timed(self, argv: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
        """Run to the end or to `self.limit_s` (a mutation can make a loop endless): then the
        whole process group is stopped and the text says TIMEOUT."""
        t0 = time.perf_counter()
        with subprocess.Popen(
            argv,
            cwd=self.root,
            env=env or self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        ) as proc:
            try:
                out, _ = proc.communicate(timeout=self.limit_s)
            except subprocess.TimeoutExpired:
                # SIGTERM first: `habitat verify` then kills its rung's processes itself (they
                # are in sessions of their own, outside this group); SIGKILL what is left.
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    out, _ = proc.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    out, _ = proc.communicate()
                out += f"\nTIMEOUT after {self.limit_s:.0f} s"
        return time.perf_counter() - t0, out

    def full(self) -> tuple[float, set[str], int]:
        junit = self.home / "full.xml"
        argv = [str(self.python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        wall, text = self._timed([*argv, f"--junitxml={junit}", "-o", "junit_family=xunit1"])
        failed: set[str] = {"TIMEOUT"} if "TIMEOUT after" in text else set()
        junit.unlink(missing_ok=True) if failed else None
        if junit.is_file():
            for case in ET.parse(junit).iter("testcase"):
                if case.find("failure") is not None or case.find("error") is not None:
                    failed.add(f"{case.get('classname')}::{case.get('name')}")
        return wall, failed, _ran(_counts(text))

    def verify(self, *extra: str, oneshot: bool | None = None) -> tuple[float, dict[str, Any]]:
        via = ["--no-host"] if (self.oneshot if oneshot is None else oneshot) else []
        wall, text = self._timed([str(HABITAT), "verify", "--json", *via, *extra])
        if "TIMEOUT after" in text:
            return wall, {"state": "red", "rungs": [], "timeout": True}
        start = text.find("{")
        try:
            return wall, json.loads(text[start:]) if start >= 0 else {"error": text[-500:]}
        except ValueError:
            return wall, {"error": text[-500:]}

    def testmon(self, record: bool = False) -> tuple[float, dict[str, int], str]:
        db = self.testmon_db if record else self.home / "run.testmondata"
        if record:
            db.unlink(missing_ok=True)
        else:
            shutil.copyfile(self.testmon_db, db)
        env = {**self.env, "TESTMON_DATAFILE": str(db)}
        argv = [str(self.python), "-m", "pytest", "-q", "--testmon"]  # testmon needs the cache
        wall, text = self._timed(argv, env)
        return wall, _counts(text), text


def _rung(result: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((r for r in result.get("rungs", []) if r["rung"] == name), None)


def _finding_keys(rung: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (d.get("file") or "", d.get("code") or "", re.sub(r"\d+", "N", d.get("message", "")))
        for d in rung.get("diagnostics", [])
    }


def run_project(project: Project, args: argparse.Namespace) -> dict[str, Any]:
    cache = args.cache.resolve()
    print(f"[{project.name}] preparing", file=sys.stderr, flush=True)
    root, python = prepare(project, cache, args.python)
    reset(root)
    # Short: the host's socket lives under it (a unix socket path has ~100 bytes).
    home = Path(tempfile.mkdtemp(prefix=f"lh-{project.name[:6]}-", dir="/tmp"))
    run = Runner(project, root, python, home)
    base_wall, base_failed, total = run.full()
    run.limit_s = max(90.0, 8 * base_wall)
    run.oneshot = args.via == "oneshot"
    rec_wall, rec = run.verify("--rung", "test.full") if args.flow == "ritual" else (0.0, {})
    if args.via in ("host", "both"):
        run.host("start")
    tm_wall, tm_counts, _ = run.testmon(record=True)
    print(
        f"[{project.name}] {total} tests; full {base_wall:.1f}s, ours recording "
        f"{rec_wall:.1f}s, testmon recording {tm_wall:.1f}s",
        file=sys.stderr,
        flush=True,
    )
    files = source_files(root, project.sources)
    baseline_findings: dict[tuple[str, str], set[tuple[str, str, str]]] = {}
    rows: list[dict[str, Any]] = []
    partial: dict[str, Any] = {
        "project": f"{project.name} {project.version}",
        "why": project.why,
        "tests": total,
        "full_s": base_wall,
        "ours_recording_s": rec_wall,
        "testmon_recording_s": tm_wall,
        "mutations": rows,
    }
    comments: list[float] = []
    partial["comment_edit_s"] = comments
    try:
        for i, m in enumerate(choose(root, files, args.mutations, args.seed)):
            rows.append(_one(run, m, base_failed, baseline_findings))
            if args.via == "both":
                reset(root)
                apply(root, m)
                one_wall, one = run.verify("--policy", "standard", oneshot=True)
                rows[-1]["oneshot_wall_s"] = one_wall
                rows[-1]["oneshot_state"] = one.get("state", "error")
            write_json(f"ladder_harness_partial_{project.name}", partial)  # survives a kill
            r = rows[-1]
            print(
                f"[{project.name}] {i + 1:2}/{args.mutations} {m.label}: full "
                f"{'caught' if r['full_caught'] else 'green'}, ladder {r['ladder_state']}, "
                f"ours {r['ours_selected']} vs testmon {r['testmon_selected']}"
                f"{' MISS' if r['miss'] else ''}{' FALSE-RED' if r['false_red'] else ''}",
                file=sys.stderr,
                flush=True,
            )
        if args.via in ("host", "both"):
            comments.extend(comment_edits(run, files[0], args.comment_samples))
            write_json(f"ladder_harness_partial_{project.name}", partial)
    finally:
        reset(root)  # never leave a mutation in the cached copy
        if args.via in ("host", "both"):
            run.host("stop")
        os.environ["HABITAT_HOME"] = str(home)
        anyio.run(stop_type_daemon, root)  # its idle timeout is an hour
    shutil.rmtree(home, ignore_errors=True)
    return {
        "project": f"{project.name} {project.version}",
        "why": project.why,
        "tests": total,
        "baseline_failures": sorted(base_failed),
        "full_s": base_wall,
        "ours_recording_s": rec_wall,
        "ours_recording_note": (_rung(rec, "test.full") or {}).get("notes", []),
        "testmon_recording_s": tm_wall,
        "testmon_recording_counts": tm_counts,
        "flow": args.flow,
        "via": args.via,
        "comment_edit_s": comments,
        "mutations": rows,
    }


def _one(
    run: Runner,
    m: Mutation,
    base_failed: set[str],
    baseline: dict[tuple[str, str], set[tuple[str, str, str]]],
) -> dict[str, Any]:
    reset(run.root)
    apply(run.root, m)
    ms = selection_time_ms(run.root, run.home)
    v_wall, ladder = run.verify("--policy", "standard")
    scoped = _rung(ladder, "test.scoped")
    scoped_source = "standard"
    if scoped is None or (
        scoped["state"] == "skipped" and "not reached" in (scoped["reason"] or "")
    ):
        _, alone = run.verify("--rung", "test.scoped")
        scoped, scoped_source = _rung(alone, "test.scoped"), "--rung test.scoped"
        ladder["timeout"] = ladder.get("timeout") or alone.get("timeout")
    full_wall, full_failed, _ = run.full()
    tm_wall, tm_counts, tm_text = run.testmon()
    new_failures = full_failed - base_failed
    if scoped is None and ladder.get("timeout"):
        scoped = {"state": "red", "output": "", "duration_s": run.limit_s, "reason": "timeout"}
    scoped = scoped or {"state": "missing", "output": "", "duration_s": 0.0}
    scoped_counts = _counts(scoped.get("output", ""))
    tm_new = tm_counts.get("failed", 0) + tm_counts.get("error", 0) + ("TIMEOUT" in tm_text)
    false_red = False
    if ladder.get("timeout"):
        # Killed at the harness's limit (an endless loop): red because of the mutation
        # exactly when the full suite fails (times out) too.
        false_red = not new_failures
    elif ladder.get("state") == "red":
        false_red = True
        for rung in ladder["rungs"]:
            if rung["state"] != "red":
                continue
            if rung["rung"].startswith("test."):
                false_red = false_red and not new_failures
                continue
            key = (rung["rung"], m.file)
            if key not in baseline:
                reset(run.root)
                _, clean = run.verify("--rung", rung["rung"], "--files", m.file)
                baseline[key] = _finding_keys(_rung(clean, rung["rung"]) or {})
                apply(run.root, m)
            if _finding_keys(rung) - baseline[key]:
                false_red = False
    selection = ladder.get("selection") or {}
    return {
        "mutation": m.label,
        "line_before": m.before.strip(),
        "line_after": m.after.strip(),
        "ladder_state": ladder.get("state", "error"),
        "ladder_rungs": {r["rung"]: r["state"] for r in ladder.get("rungs", [])},
        "ladder_wall_s": v_wall,
        "ladder_rung_s": {r["rung"]: r["duration_s"] for r in ladder.get("rungs", [])},
        "ladder_beyond_rungs_s": v_wall - sum(r["duration_s"] for r in ladder.get("rungs", [])),
        "scoped_state": scoped["state"],
        "scoped_from": scoped_source,
        "scoped_s": scoped.get("duration_s", 0.0),
        "ours_selected": _ran(scoped_counts) if scoped["state"] in ("green", "red") else 0,
        "selection_full": bool(selection.get("full")),
        "selection_items": len(selection.get("tests", [])),
        "selection_ms": ms,
        "full_s": full_wall,
        "full_caught": bool(new_failures),
        "full_new_failures": sorted(new_failures)[:20],
        "miss": bool(new_failures) and scoped["state"] != "red",
        "false_red": false_red,
        "testmon_s": tm_wall,
        "testmon_selected": _ran(tm_counts),
        "testmon_miss": bool(new_failures) and tm_new == 0,
    }


def _false_red(r: dict[str, Any]) -> bool:
    # Rows written before the timeout rule in `_one`: a ladder killed at the limit has no
    # rungs, and with the full suite failing too it caught the mutation.
    return bool(r["false_red"]) and not (r["full_caught"] and not r["ladder_rungs"])


def summarise(p: dict[str, Any]) -> dict[str, Any]:
    rows = p["mutations"]
    caught = [r for r in rows if r["full_caught"]]
    ours = statistics.median(r["ours_selected"] for r in rows) if rows else 0
    theirs = statistics.median(r["testmon_selected"] for r in rows) if rows else 0
    scoped = [r["scoped_s"] for r in rows if r["scoped_state"] in ("green", "red")]
    return {
        "mutations": len(rows),
        "full_caught": len(caught),
        "misses": sum(r["miss"] for r in rows),
        "false_reds": sum(_false_red(r) for r in rows),
        "testmon_misses": sum(r["testmon_miss"] for r in rows),
        "ours_median_selected": ours,
        "testmon_median_selected": theirs,
        "selection_ratio_vs_testmon": round(ours / max(theirs, 1), 2),
        "full_selections": sum(r["selection_full"] for r in rows),
        "scoped_median_s": statistics.median(scoped) if scoped else 0.0,
        "full_median_s": statistics.median(r["full_s"] for r in rows) if rows else 0.0,
        "selection_median_ms": statistics.median(r["selection_ms"] for r in rows) if rows else 0,
        "selection_max_ms": max((r["selection_ms"] for r in rows), default=0),
        "ladder_median_wall_s": statistics.median(r["ladder_wall_s"] for r in rows) if rows else 0,
        "cli_beyond_rungs_median_s": (
            statistics.median(r.get("ladder_beyond_rungs_s", 0.0) for r in rows) if rows else 0
        ),
        "testmon_median_s": statistics.median(r["testmon_s"] for r in rows) if rows else 0.0,
        "tails": tails(rows[1:], p.get("comment_edit_s", [])),
    }


def _targets(s: dict[str, Any]) -> str:
    if not s["mutations"]:
        return "no mutation ran: nothing measured"
    checks = [
        ("misses 0", s["misses"] == 0),
        ("false reds 0", s["false_reds"] == 0),
        ("≤2× testmon", s["ours_median_selected"] <= 2 * max(s["testmon_median_selected"], 1)),
        ("scoped ≤40% full", s["scoped_median_s"] <= 0.4 * s["full_median_s"]),
        ("selection ≤500 ms", s["selection_max_ms"] <= 500),
    ]
    return ", ".join(f"{name} {'✓' if ok else '✗'}" for name, ok in checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", default=",".join(DEFAULT), help=f"of {', '.join(PROJECTS)}")
    parser.add_argument("--mutations", type=int, default=30, help="per project")
    today = int(time.strftime("%Y%m%d", time.gmtime()))
    parser.add_argument("--seed", type=int, default=today, help="default: today (UTC)")
    parser.add_argument("--comment-samples", type=int, default=10, help="per project, via host")
    parser.add_argument("--out", type=Path, help="also write the JSON here (docs/bench-data/)")
    parser.add_argument("--flow", choices=("user", "ritual"), default="user")
    parser.add_argument("--via", choices=("host", "oneshot", "both"), default="both")
    parser.add_argument("--python", default=shutil.which("python3.12") or sys.executable)
    # Outside this repository: pytest would otherwise take our pyproject.toml as the
    # configuration of a project that has none of its own (more-itertools).
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--cache", type=Path, default=cache / "agent-habitat/bench/ladder")
    parser.add_argument(
        "--report",
        action="store_true",
        help="run nothing: tabulate bench/results/ladder_harness_partial_<project>.json "
        "(written after every mutation, e.g. by one process per project)",
    )
    args = parser.parse_args()
    # SIGTERM (a stopped run) unwinds like Ctrl-C, so the mutated copy is reset.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.environ.setdefault("COLUMNS", "200")
    print(f"seed {args.seed}; compiled {compile_habitat(HABITAT)}", file=sys.stderr, flush=True)
    load_before = [round(x, 2) for x in os.getloadavg()]
    t0 = time.perf_counter()
    results = []
    for name in args.projects.split(","):
        if name not in PROJECTS:
            raise SystemExit(f"unknown project {name!r}; known: {', '.join(PROJECTS)}")
        if args.report:
            path = RESULTS / f"ladder_harness_partial_{name}.json"
            result = json.loads(path.read_text(encoding="utf-8"))
        else:
            result = run_project(PROJECTS[name], args)
        result["summary"] = summarise(result)
        results.append(result)
    elapsed = time.perf_counter() - t0
    print_table(
        f"ladder on real projects: {args.mutations} mutations each, seed {args.seed}",
        [
            "project",
            "tests",
            "caught by full",
            "misses (testmon)",
            "false reds",
            "median selected: ours / testmon",
            "whole-suite selections",
            "scoped / full s (median)",
            "selection ms p50/max",
            "recording s: plain / ours / testmon",
            "targets",
        ],
        [
            [
                r["project"],
                str(r["tests"]),
                f"{s['full_caught']}/{s['mutations']}",
                f"{s['misses']} ({s['testmon_misses']})",
                str(s["false_reds"]),
                f"{s['ours_median_selected']:g} / {s['testmon_median_selected']:g}",
                str(s["full_selections"]),
                f"{s['scoped_median_s']:.2f} / {s['full_median_s']:.2f}",
                f"{s['selection_median_ms']:.0f} / {s['selection_max_ms']:.0f}",
                f"{r['full_s']:.1f} / {r['ours_recording_s']:.1f} / {r['testmon_recording_s']:.1f}",
                _targets(s),
            ]
            for r in results
            for s in [r["summary"]]
        ],
    )
    print_table(
        f"from the second edit ({args.flow} flow, via {args.via}), seed {args.seed}",
        [
            "project",
            "edits (caught)",
            "misses (≤ rate, 95 %) / false reds",
            "selected ours / testmon: median, p90",
            "ratio median / p90 / max / over 2×",
            "wall s median (p90): host / one-shot / full / testmon",
            "comment edit s median / max (n)",
            "targets",
        ],
        [tail_row(r["project"], r["summary"]["tails"]) for r in results],
    )
    path = write_json(
        "ladder_harness",
        {
            "commit": _commit(),
            "load_before": load_before,
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "seed": args.seed,
            "flow": args.flow,
            "via": args.via,
            "mutations_per_project": args.mutations,
            "python": args.python,
            "elapsed_s": round(elapsed, 1),
            "projects": results,
        },
    )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, args.out)
        path = args.out
    print(f"wrote {path} ({elapsed / 60:.1f} min)")


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return done.stdout.strip()


if __name__ == "__main__":
    main()
