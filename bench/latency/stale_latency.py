"""From a write to a verified file to the `verify.epoch.stale` event on the bus.

    .venv/bin/python bench/latency/stale_latency.py [--iterations 50]

A real runner with its real watcher on the sample project: one green `minimal` verify,
then each iteration writes one more committed source file (so every write is a new
change of the epoch's set) and times until the stale event naming it is published.
Target (issue 8): p50 ≤ 100 ms.
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

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import percentile, print_table, run_meta, started, write_json

TARGET_P50_MS = 100.0


async def measure(iterations: int) -> list[float]:
    from agent_habitat.cli.demo_sample import build_sample
    from agent_habitat.events import Event, InMemoryEventBus
    from agent_habitat.verify import LadderRequest
    from agent_habitat.verify.runner.config import RunnerConfig
    from agent_habitat.verify.runner.runner import VerifyRunner

    root = build_sample(Path(tempfile.mkdtemp(prefix="bench-stale-")) / "calc")
    for n in range(iterations):
        (root / f"src/calc/m{n}.py").write_text(f"N = {n}\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "modules"],
        cwd=root,
        check=True,
    )
    (root / "src/calc/text.py").write_text("X = 1\n", encoding="utf-8")
    bus = InMemoryEventBus(str(root))
    seen: dict[str, float] = {}
    arrived = anyio.Event()

    def on_event(event: Event) -> None:
        if event.kind == "verify.epoch.stale":
            for path in event.data["changed"]:
                seen.setdefault(path, time.perf_counter())
            arrived.set()

    bus.subscribe(on_event)
    samples: list[float] = []
    config = RunnerConfig(coalesce_seconds=0)
    async with VerifyRunner.open(root, bus=bus, config=config) as runner:
        ticket = await runner.request(LadderRequest(policy="minimal"), wait=True)
        assert ticket.result is not None
        assert ticket.result.state == "green", ticket.result
        for n in range(iterations):
            rel = f"src/calc/m{n}.py"
            t0 = time.perf_counter()
            (root / rel).write_text(f"N = {n + 1}\n", encoding="utf-8")
            with anyio.fail_after(5):
                while rel not in seen:
                    await arrived.wait()
                    arrived = anyio.Event()
            samples.append((seen[rel] - t0) * 1000)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--out", type=Path, help="also write the JSON here (docs/bench-data/)")
    args = parser.parse_args()
    start = started()
    os.environ.setdefault("HABITAT_HOME", tempfile.mkdtemp(prefix="bench-habitat-home-"))
    samples = anyio.run(measure, args.iterations)
    p50 = statistics.median(samples)
    p95 = percentile(samples, 0.95)
    print_table(
        f"write → verify.epoch.stale, {args.iterations} writes (ms)",
        ["p50", "p95", "min", "max"],
        [[f"{p50:.1f}", f"{p95:.1f}", f"{min(samples):.1f}", f"{max(samples):.1f}"]],
    )
    met = p50 <= TARGET_P50_MS
    print(f"p50 {p50:.1f} ms (target ≤ {TARGET_P50_MS} ms: {'met' if met else 'MISSED'})")
    path = write_json(
        "stale_latency",
        {
            **run_meta(start),
            "iterations": args.iterations,
            "p50_ms": round(p50, 2),
            "p95_ms": round(p95, 2),
            "min_ms": round(min(samples), 2),
            "max_ms": round(max(samples), 2),
            "target_p50_ms": TARGET_P50_MS,
            "target_met": met,
        },
        args.out,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
