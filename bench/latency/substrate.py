"""How long a fresh substrate takes: folder, temp dir, SQLite database, free ports, plugin.

    .venv/bin/python bench/latency/substrate.py [--iterations 300] [--ports 1]

Measures `SubstrateFactory.create` (what runs, in a worker thread, before each test task)
and `remove`, with an empty database and with a copied 1 MiB template.
Target (issue 8): creation p95 ≤ 50 ms.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import percentile, print_table, run_meta, started, write_json

TARGET_P95_MS = 50.0


def _template(folder: Path) -> Path:
    path = folder / "template.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE blob (data BLOB)")
        conn.executemany("INSERT INTO blob VALUES (?)", [(b"x" * 1024,)] * 1024)
    conn.close()
    return path


def measure(iterations: int, ports: int) -> dict[str, dict[str, list[float]]]:
    from agent_habitat.verify.runner.config import SubstrateConfig
    from agent_habitat.verify.runner.substrate import SubstrateFactory

    work = Path(tempfile.mkdtemp(prefix="bench-substrate-"))
    template = _template(work)
    cases = {
        "empty db": SubstrateConfig(ports=ports),
        "1 MiB template": SubstrateConfig(ports=ports, sqlite_template=str(template)),
    }
    out: dict[str, dict[str, list[float]]] = {}
    for name, config in cases.items():
        factory = SubstrateFactory(work / "substrates", config)
        created: list[float] = []
        removed: list[float] = []
        for n in range(iterations):
            t0 = time.perf_counter()
            sub = factory.create(f"bench-{n}")
            t1 = time.perf_counter()
            factory.remove(sub)
            t2 = time.perf_counter()
            created.append((t1 - t0) * 1000)
            removed.append((t2 - t1) * 1000)
        out[name] = {"create": created, "remove": removed}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--ports", type=int, default=1)
    parser.add_argument("--out", type=Path, help="also write the JSON here (docs/bench-data/)")
    args = parser.parse_args()
    start = started()
    samples = measure(args.iterations, args.ports)
    rows: list[list[str]] = []
    results: dict[str, dict[str, float]] = {}
    for case, phases in samples.items():
        for phase, values in phases.items():
            key = f"{case}: {phase}"
            results[key] = {
                "p50_ms": round(statistics.median(values), 3),
                "p95_ms": round(percentile(values, 0.95), 3),
                "max_ms": round(max(values), 3),
            }
            rows.append([key, *(f"{v:.2f}" for v in results[key].values())])
    print_table(
        f"substrate, {args.iterations} each, {args.ports} port(s) (ms)",
        ["case", "p50", "p95", "max"],
        rows,
    )
    worst = max(v["p95_ms"] for k, v in results.items() if k.endswith("create"))
    met = worst <= TARGET_P95_MS
    verdict = "met" if met else "MISSED"
    print(f"worst creation p95 {worst:.2f} ms (target ≤ {TARGET_P95_MS} ms: {verdict})")
    path = write_json(
        "substrate",
        {
            **run_meta(start),
            "iterations": args.iterations,
            "ports": args.ports,
            "results": results,
            "target_p95_ms": TARGET_P95_MS,
            "target_met": met,
        },
        args.out,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
