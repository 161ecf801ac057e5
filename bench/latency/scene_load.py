"""`shell_scene` latency with every tab writing at full speed and many concurrent callers.

One habitat (the library service the MCP tool and the CLI call, `Shell.scene`), its
tabs each running a background `exec yes`; `--clients` tasks on the habitat's event loop
call the scene back to back, each call timed from its arrival (it yields to the loop once
before it is served, as a request read off a transport waits for its turn). First with the
tabs idle (each holds a finished run), then loaded. Issue 12 measured p50 552 ms and
p99 1,709 ms loaded (8 tabs, 20 clients) and set the target p99 ≤ 100 ms.

    .venv/bin/python bench/latency/scene_load.py [--tabs 8] [--clients 20] [--seconds 3]
    .venv/bin/python bench/latency/scene_load.py --baseline /path/to/main/src   # before/after

With `--baseline`, each checkout is measured in a fresh process, alternately (`--rounds`),
so the machine's load falls on both alike; the ratio is the figure to trust on a busy box.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import percentile, print_table, run_meta, started, write_json

TARGET_P99_MS = 100.0


async def _clients(scene: Any, clients: int, seconds: float) -> list[float]:
    samples: list[float] = []
    deadline = time.perf_counter() + seconds

    async def client() -> None:
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            # The request has arrived; it waits for the loop like one read off a transport
            # (without this, a scene that never awaits would hide the others' queueing).
            await anyio.lowlevel.checkpoint()
            await scene()
            samples.append((time.perf_counter() - t0) * 1000)

    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(client)
    return samples


async def measure(tabs: int, clients: int, seconds: float) -> dict[str, list[float]]:
    from agent_habitat.habitat import Habitat
    from agent_habitat.shell.models import CloseArgs, RunArgs
    from agent_habitat.workspace import Workspace

    project = Path(tempfile.mkdtemp(prefix="bench-scene-"))
    names = [f"t{i}" for i in range(tabs)]
    out: dict[str, list[float]] = {}
    async with Habitat.open(Workspace.for_project(project), project=project) as opened:
        shell = opened.shell
        for name in names:
            await shell.run(RunArgs(command="seq 1 1000", tab=name))
        out["idle"] = await _clients(shell.scene, clients, seconds)
        try:
            for name in names:
                await shell.run(RunArgs(command="exec yes", tab=name, background=True))
            await anyio.sleep(0.5)  # every writer at full speed
            out["loaded"] = await _clients(shell.scene, clients, seconds)
        finally:
            for name in names:
                await shell.close(CloseArgs(tab=name))
    return out


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "calls": float(len(values)),
        "p50_ms": percentile(values, 0.50),
        "p90_ms": percentile(values, 0.90),
        "p99_ms": percentile(values, 0.99),
        "max_ms": max(values),
    }


def _child(label: str, src: str | None, args: argparse.Namespace) -> dict[str, list[float]]:
    """One measurement in a fresh process (`src`: another checkout's source folder)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    argv = [sys.executable, __file__, "--child", "--tabs", str(args.tabs)]
    argv += ["--clients", str(args.clients), "--seconds", str(args.seconds)]
    print(f"measuring {label} …", file=sys.stderr)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    samples: dict[str, list[float]] = json.loads(done.stdout)
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabs", type=int, default=8)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument(
        "--baseline",
        metavar="SRC",
        help="the `src` folder of another checkout (e.g. main), measured alternately with "
        "this one, so load on the machine falls on both alike",
    )
    parser.add_argument("--rounds", type=int, default=2, help="alternations with --baseline")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help="also write the JSON here (docs/bench-data/)")
    args = parser.parse_args(argv)
    start = started()
    os.environ.setdefault("HABITAT_HOME", tempfile.mkdtemp(prefix="bench-scene-home-"))
    if args.child:
        print(json.dumps(anyio.run(measure, args.tabs, args.clients, args.seconds)))
        return 0
    checkouts: dict[str, str | None] = {"this checkout": None}
    if args.baseline:
        checkouts = {"baseline": str(Path(args.baseline).resolve()), **checkouts}
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in checkouts}
    for _ in range(args.rounds if args.baseline else 1):
        for name, src in checkouts.items():
            for phase, values in _child(name, src, args).items():
                samples[name].setdefault(phase, []).extend(values)
    rows: list[list[str]] = []
    summary: dict[str, dict[str, dict[str, float]]] = {}
    for name, phases in samples.items():
        summary[name] = {phase: _stats(values) for phase, values in phases.items()}
        for phase, stats in summary[name].items():
            cells = [f"{stats[k]:.1f}" for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms")]
            rows.append([name, phase, str(int(stats["calls"])), *cells])
    title = f"shell_scene: {args.tabs} tabs, {args.clients} clients, {args.seconds:g} s a phase"
    columns = ["checkout", "phase", "calls", "p50 ms", "p90 ms", "p99 ms", "max ms"]
    print_table(title, columns, rows)
    loaded = summary["this checkout"]["loaded"]["p99_ms"]
    verdict = "met" if loaded <= TARGET_P99_MS else "NOT met"
    print(f"loaded p99 {loaded:.1f} ms; target ≤ {TARGET_P99_MS:g} ms: {verdict}")
    if args.baseline:
        base = summary["baseline"]["loaded"]
        mine = summary["this checkout"]["loaded"]
        print(
            f"loaded, baseline / this checkout: p50 {base['p50_ms'] / mine['p50_ms']:.1f}×, "
            f"p99 {base['p99_ms'] / mine['p99_ms']:.1f}×"
        )
    load = os.getloadavg()
    print(f"load average during the run: {load[0]:.1f} (on {os.cpu_count()} CPUs)")
    path = write_json(
        "scene_load",
        {
            **run_meta(start),
            "tabs": args.tabs,
            "clients": args.clients,
            "seconds": args.seconds,
            "baseline": args.baseline,
            "target_p99_ms": TARGET_P99_MS,
            "load_average": load[0],
            "checkouts": summary,
        },
        args.out,
    )
    print(f"JSON: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
