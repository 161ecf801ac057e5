"""`echo hi` through a habitat foreground run vs raw `subprocess.run(["bash", "-c", ...])`.

Both measured interleaved in one process, so machine noise hits both alike. The habitat
path is the library service the MCP tools and CLI call (`ShellHabitat.run`): SQLite
bookkeeping, the recording wrapper, spool output, cwd/env carry-over, the capped result.

    .venv/bin/python bench/run_latency.py [--iterations 300]

Target (issue 2): median overhead ≤ 3 ms over raw.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import percentile, print_table, write_json

TARGET_OVERHEAD_MS = 3.0


async def measure(iterations: int, warmup: int) -> dict[str, list[float]]:
    from agent_habitat.habitat import Habitat
    from agent_habitat.shell.models import RunArgs
    from agent_habitat.workspace import Workspace

    project = Path(tempfile.mkdtemp(prefix="bench-project-"))
    samples: dict[str, list[float]] = {"raw": [], "habitat": []}
    async with Habitat.open(Workspace.for_project(project), project=project) as opened:
        h = opened.shell
        for n in range(warmup + iterations):
            t0 = time.perf_counter()
            subprocess.run(["bash", "-c", "echo hi"], capture_output=True, check=True)
            t1 = time.perf_counter()
            result = await h.run(RunArgs(command="echo hi"))
            t2 = time.perf_counter()
            assert result.output == "hi\n", result
            if n >= warmup:
                samples["raw"].append((t1 - t0) * 1000)
                samples["habitat"].append((t2 - t1) * 1000)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("HABITAT_HOME", tempfile.mkdtemp(prefix="bench-habitat-home-"))
    samples = anyio.run(measure, args.iterations, args.warmup)
    raw_med = statistics.median(samples["raw"])
    hab_med = statistics.median(samples["habitat"])
    overhead = hab_med - raw_med
    rows = []
    summary: dict[str, dict[str, float]] = {}
    for name, values in samples.items():
        med = statistics.median(values)
        summary[name] = {
            "median_ms": round(med, 3),
            "p90_ms": round(percentile(values, 0.9), 3),
            "min_ms": round(min(values), 3),
        }
        rows.append(
            [
                name,
                f"{med:.2f}",
                f"{percentile(values, 0.9):.2f}",
                f"{min(values):.2f}",
                f"{med / raw_med:.2f}×",
            ]
        )
    print_table(
        f"echo hi, {args.iterations} interleaved runs (ms)",
        ["path", "median", "p90", "min", "vs raw"],
        rows,
    )
    verdict = "met" if overhead <= TARGET_OVERHEAD_MS else "MISSED"
    print(
        f"median overhead {overhead:.2f} ms (target ≤ {TARGET_OVERHEAD_MS} ms: {verdict}); "
        f"ratio {hab_med / raw_med:.2f}×"
    )
    path = write_json(
        "run_latency",
        {
            "iterations": args.iterations,
            "results": summary,
            "median_overhead_ms": round(overhead, 3),
            "ratio": round(hab_med / raw_med, 3),
            "target_overhead_ms": TARGET_OVERHEAD_MS,
            "target_met": overhead <= TARGET_OVERHEAD_MS,
        },
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
