"""A comment-only edit verified through a warm host, and where its wall goes (issue 22:
≤ 300 ms through a host).

For each project (ladder_harness_projects.py): a fresh state folder, the workspace host
started as `habitat mcp` starts it, one real edit verified first (the flow's first verify:
trust, warm-up), then `--samples` comment-only edits (a new comment line at the top of a
package module, each its own text, on the clean tree), each verified with
`habitat verify --json` by the CLI twice, interleaved: with the habitat's bytecode (as an
installed wheel has it: `compileall` first) and without (a copy of the package with no
`__pycache__`, first on PYTHONPATH, while PYTHONDONTWRITEBYTECODE is set, as in this
machine's environment: every CLI start then compiles the habitat's modules, and only those).
Per sample: the CLI's wall, the host's own wall for
the request (the result's `timing.wall_s`) and what the CLI adds.

With `--baseline-src DIR` the two sides are two habitats instead, both with bytecode: the
old code (DIR on PYTHONPATH) and this worktree's (or `--after-src`), each with its own state
folder and its own host on the same project (each host sees the other's edits too), their
order swapped every sample.

    .venv/bin/python bench/ladder/ladder_comment_host.py [--projects webcolors,semver]
        [--samples 12] [--baseline-src OLD/src [--after-src NEW/src]] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_bytecode import compile_habitat
from ladder_harness import Runner
from ladder_harness_mutations import apply, choose
from ladder_harness_projects import PROJECTS, prepare, reset, source_files
from ladder_oneshot import AFTER

from _report import print_table, write_json

REPO = Path(__file__).resolve().parents[2]


def _verify(run: Runner, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    wall, text = run._timed([str(AFTER), "verify", "--json", "--policy", "standard"], env)
    start = text.find("{")
    try:
        return wall, json.loads(text[start:]) if start >= 0 else {"error": text[-300:]}
    except ValueError:
        return wall, {"error": text[-300:]}


def run_project(name: str, args: argparse.Namespace, bare: Path) -> dict[str, Any]:
    project = PROJECTS[name]
    root, python = prepare(project, args.cache.resolve(), args.python)
    reset(root)
    runs: dict[str, Runner] = {}
    variants: dict[str, dict[str, str]] = {}
    if args.baseline_src is None:
        home = Path(tempfile.mkdtemp(prefix=f"lc-{name[:6]}-", dir="/tmp"))
        run = Runner(project, root, python, home)
        variants["bytecode"] = {**run.env, "PYTHONDONTWRITEBYTECODE": "1"}
        variants["no bytecode"] = {**variants["bytecode"], "PYTHONPATH": str(bare)}
        runs = dict.fromkeys(variants, run)
    else:
        for side, src in (("before", args.baseline_src), ("after", args.after_src)):
            home = Path(tempfile.mkdtemp(prefix=f"lc-{side[0]}{name[:5]}-", dir="/tmp"))
            runs[side] = Runner(project, root, python, home)
            runs[side].env["PYTHONDONTWRITEBYTECODE"] = "1"
            if src is not None:
                runs[side].env["PYTHONPATH"] = str(src)  # the host started takes it too
            variants[side] = runs[side].env
    files = source_files(root, project.sources[:1])
    samples: list[dict[str, Any]] = []
    try:
        first = next(iter(choose(root, files, 1, args.seed)))
        hosts = {id(run): (variant, run) for variant, run in reversed(runs.items())}
        for variant, run in reversed(hosts.values()):  # each host: its start, a real edit
            run.host("start")
            reset(root)
            apply(root, first)
            first_wall, first_result = _verify(run, variants[variant])
            print(
                f"[{name}] {variant}: first verify {first_wall:.2f}s {first_result.get('state')}",
                file=sys.stderr,
            )
        for i in range(args.samples):
            order = list(variants) if i % 2 == 0 else list(reversed(variants))
            for variant in order:
                reset(root)
                path = root / files[0]
                text = path.read_text(encoding="utf-8")
                path.write_text(f"# bench: comment {i} {variant}\n{text}", encoding="utf-8")
                wall, result = _verify(runs[variant], variants[variant])
                host_wall = (result.get("timing") or {}).get("wall_s")
                samples.append(
                    {
                        "variant": variant,
                        "wall_s": round(wall, 3),
                        "host_wall_s": host_wall,
                        "state": result.get("state", "error"),
                        "rungs": {r["rung"]: r["state"] for r in result.get("rungs", [])},
                    }
                )
                print(
                    f"[{name}] {i + 1}/{args.samples} {variant}: {wall:.3f}s (host "
                    f"{host_wall}) {result.get('state')}",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        reset(root)
        for run in {id(r): r for r in runs.values()}.values():
            run.host("stop")
            shutil.rmtree(run.home, ignore_errors=True)
    return {"project": f"{project.name} {project.version}", "samples": samples}


def rows(p: dict[str, Any]) -> list[list[str]]:
    out = []
    for variant in dict.fromkeys(s["variant"] for s in p["samples"]):
        got = [s for s in p["samples"] if s["variant"] == variant]
        walls = [s["wall_s"] for s in got]
        hosts = [s["host_wall_s"] or 0.0 for s in got]
        med = statistics.median
        out.append(
            [
                p["project"],
                variant,
                str(len(got)),
                f"{med(walls):.3f} / {max(walls):.3f}",
                f"{med(hosts):.3f}",
                f"{med(w - h for w, h in zip(walls, hosts, strict=True)):.3f}",
                f"{sum(w <= 0.3 for w in walls)}/{len(walls)}",
                ", ".join(sorted({s["state"] for s in got})),
            ]
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", default="webcolors,semver")
    parser.add_argument("--samples", type=int, default=12)
    parser.add_argument("--seed", type=int, default=20261206)
    parser.add_argument("--python", default=shutil.which("python3.12") or sys.executable)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--cache", type=Path, default=cache / "agent-habitat/bench/ladder")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--baseline-src", type=Path, help="the old code's src folder")
    parser.add_argument("--after-src", type=Path, help="default: this worktree's")
    args = parser.parse_args()
    # SIGTERM (a stopped run) unwinds like Ctrl-C: the host is stopped, the copy reset.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    compiled = compile_habitat(AFTER)
    for src in filter(None, (args.baseline_src, args.after_src)):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
    bare = Path(tempfile.mkdtemp(prefix="lc-nopyc-"))
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(compiled, bare / "agent_habitat", ignore=ignore)
    load_before = [round(x, 2) for x in os.getloadavg()]
    try:
        results = [run_project(name, args, bare) for name in args.projects.split(",")]
    finally:
        shutil.rmtree(bare, ignore_errors=True)
    load_after = [round(x, 2) for x in os.getloadavg()]
    print_table(
        f"comment-only edit through a warm host; load {load_before} -> {load_after}",
        [
            "project",
            "CLI",
            "n",
            "wall s median / max",
            "host's own wall s",
            "CLI adds s",
            "<= 300 ms",
            "states",
        ],
        [row for p in results for row in rows(p)],
    )
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    payload = {
        "commit": head.stdout.strip(),
        "compiled": compiled,
        "baseline_src": str(args.baseline_src) if args.baseline_src else None,
        "after_src": str(args.after_src or compiled) if args.baseline_src else None,
        "load_before": load_before,
        "load_after": load_after,
        "projects": results,
    }
    print(f"wrote {write_json('ladder_comment_host', payload, args.out)}")


if __name__ == "__main__":
    main()
