"""`echo hi` through a habitat foreground run vs raw `subprocess.run(["bash", "-c", ...])`,
and what a run's spool keeper costs a short run.

Both measured interleaved in one process, so machine noise hits both alike. The habitat
path is the library service the MCP tools and CLI call (`Shell.run`): SQLite
bookkeeping, the recording wrapper, spool output, cwd/env carry-over, the capped result.

The keeper rows run `true` and `echo hi` in the same habitat with its spool keepers as
shipped and with their start switched off, in alternating blocks (a keeper started by one
run may still be starting during the next: that is part of its cost), the first run of
each block not counted.

    .venv/bin/python bench/latency/run_latency.py [--iterations 300]

Target (issue 2): median overhead ≤ 3 ms over raw. Keeper (issue 12): no measurable cost
to a short run (ratio with/without ≤ 1.05).
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
from _report import percentile, print_table, write_json

TARGET_OVERHEAD_MS = 3.0
TARGET_KEEPER_RATIO = 1.05
_BLOCK = 10


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


_KEEPER_COMMANDS = ("true", "echo hi")


async def measure_keeper(iterations: int, warmup: int) -> dict[str, list[float]]:
    import agent_habitat.shell.spool_keeping as spool_keeping
    from agent_habitat.habitat import Habitat
    from agent_habitat.shell.models import RunArgs
    from agent_habitat.workspace import Workspace

    shipped = spool_keeping._start_keeper

    def no_keeper(output: Path, budget: object) -> None:
        return None

    project = Path(tempfile.mkdtemp(prefix="bench-project-"))
    samples: dict[str, list[float]] = {
        f"{command}{variant}": []
        for command in _KEEPER_COMMANDS
        for variant in (" keeper", " no keeper")
    }
    blocks = 2 * (-(-(warmup + iterations) // (_BLOCK - 1)))
    async with Habitat.open(Workspace.for_project(project), project=project) as opened:
        h = opened.shell
        try:
            for block in range(blocks):
                variant = " keeper" if block % 2 == 0 else " no keeper"
                spool_keeping._start_keeper = shipped if block % 2 == 0 else no_keeper
                for n in range(_BLOCK):
                    for command in _KEEPER_COMMANDS:
                        t0 = time.perf_counter()
                        result = await h.run(RunArgs(command=command, tab=command.split()[0]))
                        elapsed = (time.perf_counter() - t0) * 1000
                        assert result.exit_code == 0, result
                        counted = samples[f"{command}{variant}"]
                        if n > 0 and block >= 2 * (warmup // _BLOCK) and len(counted) < iterations:
                            counted.append(elapsed)
        finally:
            spool_keeping._start_keeper = shipped
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("HABITAT_HOME", tempfile.mkdtemp(prefix="bench-habitat-home-"))
    samples = anyio.run(measure, args.iterations, args.warmup)
    keeper = anyio.run(measure_keeper, args.iterations, args.warmup)
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
    keeper_rows = []
    keeper_summary: dict[str, dict[str, float]] = {}
    for command in _KEEPER_COMMANDS:
        with_med = statistics.median(keeper[f"{command} keeper"])
        without_med = statistics.median(keeper[f"{command} no keeper"])
        ratio = with_med / without_med
        keeper_summary[command] = {
            "with_keeper_median_ms": round(with_med, 3),
            "without_keeper_median_ms": round(without_med, 3),
            "with_keeper_p90_ms": round(percentile(keeper[f"{command} keeper"], 0.9), 3),
            "without_keeper_p90_ms": round(percentile(keeper[f"{command} no keeper"], 0.9), 3),
            "ratio": round(ratio, 3),
        }
        keeper_rows.append(
            [
                command,
                f"{with_med:.2f}",
                f"{without_med:.2f}",
                f"{percentile(keeper[f'{command} keeper'], 0.9):.2f}",
                f"{percentile(keeper[f'{command} no keeper'], 0.9):.2f}",
                f"{ratio:.2f}×",
            ]
        )
    print_table(
        f"a short run with its spool keeper vs without, {args.iterations} runs each (ms)",
        ["command", "keeper", "no keeper", "p90 keeper", "p90 no keeper", "ratio"],
        keeper_rows,
    )
    keeper_met = all(v["ratio"] <= TARGET_KEEPER_RATIO for v in keeper_summary.values())
    print(f"keeper ratio target ≤ {TARGET_KEEPER_RATIO}: {'met' if keeper_met else 'MISSED'}")
    path = write_json(
        "run_latency",
        {
            "iterations": args.iterations,
            "results": summary,
            "median_overhead_ms": round(overhead, 3),
            "ratio": round(hab_med / raw_med, 3),
            "target_overhead_ms": TARGET_OVERHEAD_MS,
            "target_met": overhead <= TARGET_OVERHEAD_MS,
            "keeper": keeper_summary,
            "keeper_target_ratio": TARGET_KEEPER_RATIO,
            "keeper_target_met": keeper_met,
        },
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
