"""Shared by the library benchmarks: percentiles, a median's confidence interval and the
verdict it allows, a rich table, JSON under bench/results/ (and, with `out`, a copy to commit
under docs/bench-data/ with the commit and the load)."""

from __future__ import annotations

import json
import math
import os
import platform
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parents[1]


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def median_ci(values: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """A distribution-free interval for the median: the order statistics (k, n + 1 - k)
    with k the largest rank whose binomial tail P(X < k) stays ≤ (1 - confidence) / 2.
    Fewer than 6 samples give no interval narrower than their range."""
    ordered = sorted(values)
    n = len(ordered)
    tail = (1 - confidence) / 2
    k, below = 0, 0.0
    while k < n // 2:
        below += math.comb(n, k) / 2**n  # P(X = k) for X ~ Binomial(n, 1/2)
        if below > tail:
            break
        k += 1
    k = max(k, 1)
    return ordered[k - 1], ordered[n - k]


def verdict(values: list[float], target: float) -> str:
    """'✓' when the median's 95 % interval is at or under `target`, '✗' when it is over,
    and 'undecided' when the interval straddles it (the spread does not clear the target)."""
    if not values:
        return "no samples"
    low, high = median_ci(values)
    return "✓" if high <= target else "✗" if low > target else "undecided"


def started() -> dict[str, Any]:
    """This repository's commit and the load average when the run starts (the code measured
    is the code at the start: a branch moved on during a long run must not be credited)."""
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return {"commit": done.stdout.strip(), "load_before": load_now()}


def run_meta(start: dict[str, Any]) -> dict[str, Any]:
    """`started()`'s commit and load, and the load average now, for the JSON."""
    return {**start, "load_after": load_now()}


def load_now() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict[str, Any]:
    """What ran the bench: Python, the platform, the CPUs and their model."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), ""
            )
    except OSError:
        pass
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "cpu_model": model or platform.processor() or "not known",
    }


def print_table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    table = Table(*columns, title=title)
    for row in rows:
        table.add_row(*row)
    Console().print(table)


def write_json(name: str, payload: dict[str, Any], out: Path | None = None) -> Path:
    """Write bench/results/NAME.json; with `out`, copy it there too and return that path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {
        "benchmark": name,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        **payload,
    }
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out)
        return out
    return path
