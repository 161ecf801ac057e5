"""Nothing waits that need not: a lone verify request's start, and `habitat verify`'s wall
through a warm host vs one-shot vs plain `pytest`, on the demo sample project.

    .venv/bin/python bench/latency/verify_latency.py [--requests 20] [--rounds 5]

1. **Lone request → first rung start.** A real runner (its watcher, the default 1.5 s
   coalesce window) on the sample project, warmed by one verify. Each sample edits a
   source file, calls `VerifyRunner.request()` and times, on the bus, the climb's start
   (`verify.epoch.started`) and its first rung's (`environment.task.started` of
   `diagnose.files`). Target (issue 22): first rung ≤ 50 ms after the call. The peer in
   the same run is the window a request used to wait out before anything started.
2. **CLI wall.** Per round, in turn (interleaved, so load hits all three alike) after the
   same kind of edit: `habitat verify` through a warm host (started and warmed first),
   `habitat verify --no-host` (one-shot: a cold process, cold checkers), and the project's
   plain `pytest -q` (the whole suite: what a person runs instead). Reported: median and
   p90 wall per flow, and ratios to `pytest` and to the one-shot path.

Results go to bench/results/verify_latency.json. The full version (`--requests 50
--rounds 15`) takes a few minutes on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import percentile, print_table, run_meta, started, write_json

TARGET_FIRST_RUNG_MS = 50.0
POLICY: Any = "standard"  # --policy
HABITAT = Path(sys.executable).with_name("habitat")


def _edit(root: Path, n: int) -> None:
    # A new content each time: no memo of an earlier climb can answer it.
    text = root / "src/calc/text.py"
    lines = [line for line in text.read_text(encoding="utf-8").splitlines() if "BENCH" not in line]
    text.write_text("\n".join([*lines, f"BENCH = {n}"]) + "\n", encoding="utf-8")


def _sample() -> Path:
    from agent_habitat.cli.demo_sample import build_sample

    root = build_sample(Path(tempfile.mkdtemp(prefix="bench-verify-")) / "calc")
    _edit(root, 0)
    return root


async def lone_requests(root: Path, requests: int) -> dict[str, list[float]]:
    from agent_habitat.events import Event, InMemoryEventBus
    from agent_habitat.verify import LadderRequest, stop_type_daemon
    from agent_habitat.verify.runner.runner import VerifyRunner

    bus = InMemoryEventBus(str(root))
    marks: dict[str, dict[str, float]] = {}

    def on_event(event: Event) -> None:
        if event.task is None:
            return
        chain = event.task.split(".", 1)[0]
        seen = marks.setdefault(chain, {})
        if event.kind == "verify.epoch.started":
            seen.setdefault("climb", time.perf_counter())
        elif event.kind == "environment.task.started" and event.data.get("rung"):
            seen.setdefault("rung", time.perf_counter())

    bus.subscribe(on_event)
    out: dict[str, list[float]] = {"climb_ms": [], "first_rung_ms": [], "verdict_ms": []}
    try:
        async with VerifyRunner.open(root, bus=bus) as runner:
            warm = await runner.request(LadderRequest(policy=POLICY), wait=True)
            assert warm.result is not None
            assert warm.result.state == "green", warm.result
            window = runner.config.coalesce_seconds
            for n in range(1, requests + 1):
                _edit(root, n)
                t0 = time.perf_counter()
                ticket = await runner.request(LadderRequest(policy=POLICY))
                epoch = await runner.wait(ticket.task)
                done = time.perf_counter()
                assert epoch.state == "green", epoch
                seen = marks[ticket.task]
                out["climb_ms"].append((seen["climb"] - t0) * 1000)
                out["first_rung_ms"].append((seen["rung"] - t0) * 1000)
                out["verdict_ms"].append((done - t0) * 1000)
        out["window_ms"] = [window * 1000]
    finally:
        await stop_type_daemon(root)
    return out


def _timed(argv: list[str], root: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=root, capture_output=True, check=False, timeout=600)
    return time.perf_counter() - t0, proc.returncode


def cli_walls(root: Path, rounds: int) -> dict[str, list[float]]:
    flows = {
        "habitat verify (warm host)": [str(HABITAT), "verify", "--project", str(root)],
        "habitat verify --no-host": [str(HABITAT), "verify", "--no-host", "--project", str(root)],
        "pytest -q (whole suite)": [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
    }
    walls: dict[str, list[float]] = {name: [] for name in flows}
    subprocess.run([str(HABITAT), "host", "start", "--project", str(root)], check=True)
    try:
        # Warm the host as a person's first verify would.
        _edit(root, 1000)
        _timed(flows["habitat verify (warm host)"], root)
        for n in range(rounds):
            for i, (name, argv) in enumerate(flows.items()):
                _edit(root, 2000 + n * 10 + i)
                wall, code = _timed(argv, root)
                if code != 0:
                    raise SystemExit(f"{name} exited {code} in round {n}")
                walls[name].append(wall)
    finally:
        subprocess.run([str(HABITAT), "host", "stop", "--project", str(root)], check=False)
    return walls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--policy", default="standard", help="the lone requests' policy")
    parser.add_argument("--out", type=Path, help="also write the JSON here (docs/bench-data/)")
    args = parser.parse_args()
    start = started()
    global POLICY
    POLICY = args.policy
    os.environ.setdefault("HABITAT_HOME", tempfile.mkdtemp(prefix="bench-habitat-home-"))
    os.environ.pop("HABITAT_COALESCE_SECONDS", None)  # the default window: what users get
    lone = anyio.run(lone_requests, _sample(), args.requests)
    window = lone.pop("window_ms")[0]
    rows = [
        [
            name,
            f"{statistics.median(v):.1f}",
            f"{percentile(v, 0.9):.1f}",
            f"{max(v):.1f}",
            f"{window / statistics.median(v):.1f}×" if name != "verdict_ms" else "",
        ]
        for name, v in lone.items()
    ]
    print_table(
        f"a lone verify request (policy {POLICY}), {args.requests} requests (ms)",
        ["from the call to", "p50", "p90", "max", f"the {window:.0f} ms window ÷ p50"],
        rows,
    )
    first = statistics.median(lone["first_rung_ms"])
    met = first <= TARGET_FIRST_RUNG_MS
    print(
        f"first rung p50 {first:.1f} ms (target ≤ {TARGET_FIRST_RUNG_MS:.0f} ms: "
        f"{'met' if met else 'MISSED'})"
    )
    walls = cli_walls(_sample(), args.rounds)
    pytest_p50 = statistics.median(walls["pytest -q (whole suite)"])
    oneshot_p50 = statistics.median(walls["habitat verify --no-host"])
    print_table(
        f"CLI wall on the demo sample, {args.rounds} interleaved rounds (s)",
        ["flow", "p50", "p90", "÷ pytest", "÷ one-shot"],
        [
            [
                name,
                f"{statistics.median(v):.2f}",
                f"{percentile(v, 0.9):.2f}",
                f"{statistics.median(v) / pytest_p50:.2f}",
                f"{statistics.median(v) / oneshot_p50:.2f}",
            ]
            for name, v in walls.items()
        ],
    )
    path = write_json(
        "verify_latency",
        {
            **run_meta(start),
            "requests": args.requests,
            "policy": POLICY,
            "rounds": args.rounds,
            "coalesce_window_ms": window,
            "lone_request_ms": {
                k: {"p50": round(statistics.median(v), 2), "p90": round(percentile(v, 0.9), 2)}
                for k, v in lone.items()
            },
            "first_rung_target_ms": TARGET_FIRST_RUNG_MS,
            "first_rung_target_met": met,
            "cli_wall_s": {
                k: {"p50": round(statistics.median(v), 3), "p90": round(percentile(v, 0.9), 3)}
                for k, v in walls.items()
            },
            "ratios_to_pytest": {
                k: round(statistics.median(v) / pytest_p50, 3) for k, v in walls.items()
            },
        },
        args.out,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
