"""Timings the tests no longer assert: parallel tabs, and the rate of progress reports.

The tests prove the behaviour with conditions (two runs that each wait for the other;
a run that waits until it was reported on); how long it takes is measured here, where
a loaded machine makes a slow number, not a red build.

* parallel: two `sleep S` foreground runs on two tabs at once, against one alone. The
  pair should take about as long as one (ratio near 1.0; serialised it would be 2.0).
* progress: a foreground run of D seconds with a progress callback; reports per second
  (DESIGN §4: at most four a second) and the longest gap between two reports.

    .venv/bin/python bench/latency/tab_timings.py [--repeats 5] [--sleep 0.5] [--progress-seconds 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
import itertools

from _report import percentile, print_table, write_json

MAX_REPORTS_PER_SECOND = 4.0


async def measure(repeats: int, sleep: float, progress_seconds: float) -> dict[str, Any]:
    from agent_habitat.habitat import Habitat
    from agent_habitat.shell.models import RunArgs
    from agent_habitat.workspace import Workspace

    project = Path(tempfile.mkdtemp(prefix="bench-project-"))
    single: list[float] = []
    pair: list[float] = []
    rates: list[float] = []
    gaps: list[float] = []
    async with Habitat.open(Workspace.for_project(project), project=project) as opened:
        h = opened.shell
        for _ in range(repeats):
            t0 = time.perf_counter()
            await h.run(RunArgs(command=f"sleep {sleep}", tab="one"))
            single.append(time.perf_counter() - t0)

            t0 = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for tab in ("a", "b"):
                    tg.start_soon(h.run, RunArgs(command=f"sleep {sleep}", tab=tab))
            pair.append(time.perf_counter() - t0)

            stamps: list[float] = []

            async def on_progress(elapsed: float, line: str, stamps: list[float] = stamps) -> None:
                stamps.append(time.perf_counter())

            t0 = time.perf_counter()
            await h.run(RunArgs(command=f"sleep {progress_seconds}", tab="p"), on_progress)
            duration = time.perf_counter() - t0
            rates.append(len(stamps) / duration)
            points = [t0, *stamps]
            gaps.append(max(b - a for a, b in itertools.pairwise(points)) if stamps else duration)
    return {"single_s": single, "pair_s": pair, "reports_per_s": rates, "max_gap_s": gaps}


def _row(name: str, values: list[float], unit: str) -> list[str]:
    return [
        name,
        f"{statistics.median(values):.3f}",
        f"{percentile(values, 0.9):.3f}",
        f"{min(values):.3f}",
        f"{max(values):.3f}",
        unit,
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sleep", type=float, default=0.5)
    parser.add_argument("--progress-seconds", type=float, default=2.0)
    args = parser.parse_args()
    os.environ.setdefault("HABITAT_HOME", tempfile.mkdtemp(prefix="bench-habitat-home-"))
    samples = anyio.run(measure, args.repeats, args.sleep, args.progress_seconds)
    ratio = statistics.median(samples["pair_s"]) / statistics.median(samples["single_s"])
    top_rate = max(samples["reports_per_s"])
    print_table(
        f"{args.repeats} repeats: sleep {args.sleep} s per tab, progress over "
        f"{args.progress_seconds} s",
        ["measure", "median", "p90", "min", "max", "unit"],
        [
            _row("one tab", samples["single_s"], "s"),
            _row("two tabs at once", samples["pair_s"], "s"),
            _row("progress reports", samples["reports_per_s"], "per s"),
            _row("longest gap between reports", samples["max_gap_s"], "s"),
        ],
    )
    print(
        f"two tabs / one tab: {ratio:.2f}× (serialised would be 2.0×); "
        f"progress at most {top_rate:.2f}/s (limit {MAX_REPORTS_PER_SECOND}/s: "
        f"{'kept' if top_rate <= MAX_REPORTS_PER_SECOND else 'EXCEEDED'})"
    )
    path = write_json(
        "tab_timings",
        {
            "repeats": args.repeats,
            "sleep_s": args.sleep,
            "progress_seconds": args.progress_seconds,
            "samples": {k: [round(v, 4) for v in vs] for k, vs in samples.items()},
            "parallel_ratio": round(ratio, 3),
            "max_reports_per_s": round(top_rate, 3),
            "rate_limit_kept": top_rate <= MAX_REPORTS_PER_SECOND,
        },
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
