"""100 MB of output through a habitat foreground run: peak memory and wall time.

Compared in one run with the raw command writing to /dev/null (the target's baseline)
and to a fresh file (the floor for keeping the output: the kernel has to copy every byte
into the page cache). The habitat sends output to a spool file and reads back only a
capped head + tail, so its memory should not grow with the output.

    .venv/bin/python bench/latency/big_output.py [--megabytes 100] [--repeats 3]

Targets (issue 2): peak RSS growth ≤ 50 MB; wall ≤ 1.3× the raw command.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TypedDict

import anyio
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import print_table, write_json

TARGET_RSS_MB = 50.0
TARGET_WALL_RATIO = 1.3


class PeakRss:
    """Samples this process's RSS in a thread; ru_maxrss alone cannot be reset."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            self.peak = max(self.peak, me.memory_info().rss)
            self._stop.wait(0.002)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class Measured(TypedDict):
    bytes: int
    raw_wall_s: list[float]
    raw_to_file_wall_s: list[float]
    habitat_wall_s: list[float]
    rss_growth_mb: list[float]
    returned_to_agent_bytes: int
    ru_maxrss_mb: float


async def measure(megabytes: int, repeats: int) -> Measured:
    from agent_habitat.habitat import Habitat
    from agent_habitat.shell.models import RunArgs
    from agent_habitat.workspace import Workspace

    size = megabytes * 1_000_000
    command = f"head -c {size} /dev/zero | tr '\\0' x"
    project = Path(tempfile.mkdtemp(prefix="bench-project-"))
    raw_walls: list[float] = []
    file_walls: list[float] = []
    hab_walls: list[float] = []
    growth: list[float] = []
    returned: int = 0
    async with Habitat.open(Workspace.for_project(project), project=project) as opened:
        h = opened.shell
        await h.run(RunArgs(command="true"))
        for _ in range(repeats):
            t0 = time.perf_counter()
            subprocess.run(["bash", "-c", command + " > /dev/null"], check=True)
            raw_walls.append(time.perf_counter() - t0)
            target = project / "raw.out"
            t0 = time.perf_counter()
            subprocess.run(["bash", "-c", f"{command} > {target}"], check=True)
            file_walls.append(time.perf_counter() - t0)
            target.unlink()
            baseline = psutil.Process().memory_info().rss
            with PeakRss() as peak:
                t0 = time.perf_counter()
                result = await h.run(RunArgs(command=command))
                hab_walls.append(time.perf_counter() - t0)
            assert result.output_bytes == size, result.output_bytes
            growth.append(max(0, peak.peak - baseline) / 1e6)
            returned = len(result.output.encode())
    return {
        "bytes": size,
        "raw_wall_s": raw_walls,
        "raw_to_file_wall_s": file_walls,
        "habitat_wall_s": hab_walls,
        "rss_growth_mb": growth,
        "returned_to_agent_bytes": returned,
        "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("HABITAT_HOME", tempfile.mkdtemp(prefix="bench-habitat-home-"))
    data = anyio.run(measure, args.megabytes, args.repeats)
    raw = statistics.median(data["raw_wall_s"])
    hab = statistics.median(data["habitat_wall_s"])
    to_file = statistics.median(data["raw_to_file_wall_s"])
    rss = max(data["rss_growth_mb"])
    ratio = hab / raw
    file_ratio = hab / to_file
    print_table(
        f"{args.megabytes} MB of output, median of {args.repeats}",
        ["path", "wall (s)", "peak RSS growth (MB)", "bytes returned to the agent"],
        [
            ["raw > /dev/null", f"{raw:.3f}", "—", "—"],
            ["raw > file", f"{to_file:.3f}", "—", "—"],
            ["habitat run", f"{hab:.3f}", f"{rss:.1f}", str(data["returned_to_agent_bytes"])],
        ],
    )
    ok_rss = rss <= TARGET_RSS_MB
    ok_wall = ratio <= TARGET_WALL_RATIO
    wall_verdict = "met" if ok_wall else "MISSED"
    rss_verdict = "met" if ok_rss else "MISSED"
    print(
        f"wall ratio {ratio:.2f}× (target ≤ {TARGET_WALL_RATIO}×: {wall_verdict}); "
        f"RSS growth {rss:.1f} MB (target ≤ {TARGET_RSS_MB} MB: {rss_verdict})"
    )
    print(
        f"vs the same command writing to a file: {file_ratio:.2f}×; "
        f"raw to a file is itself {to_file / raw:.2f}× raw to /dev/null here"
    )
    path = write_json(
        "big_output",
        {
            **data,
            "wall_ratio": round(ratio, 3),
            "wall_ratio_vs_raw_to_file": round(file_ratio, 3),
            "max_rss_growth_mb": round(rss, 2),
            "targets": {"rss_growth_mb": TARGET_RSS_MB, "wall_ratio": TARGET_WALL_RATIO},
            "target_met": ok_rss and ok_wall,
        },
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
