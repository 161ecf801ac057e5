"""Where `compile.project` spends what it adds beyond the type daemon's own work (issue 22):
the climb's hops to worker threads, timed, under whatever load the machine has.

Same flow as ladder_harness_warm.py's compile rounds (packaging 26.4 opened warm in this
process, coalesce window 0, one module edited per round, `compile.project` alone, then the
same `run` request sent to the same daemon from here: the peer, like for like). Besides,
`anyio.to_thread.run_sync` is wrapped for the whole process, so every hop the climb makes
(snapshot, layout, toolchains, impact, the package list, the daemon request) is split
into: the wait before the function starts in its worker thread, the function's own time,
and the wait until the event loop resumes the caller. Under load the two waits are a
thread and a loop waiting for a core; the table says how much of the overhead they are.

    .venv/bin/python bench/ladder/ladder_climb_phases.py [--rounds 9] [--cache DIR]
        [--report bench/results/ladder_climb_phases.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_harness_projects import PROJECTS, prepare
from ladder_harness_warm import _append, _dmypy_request, _modules, _one, _open_warm, _reset

from _report import print_table, write_json
from agent_habitat.verify import stop_type_daemon

HOPS: list[dict[str, Any]] = []
BACKGROUND = ("RustNotify.watch", "ProjectWatcher.", "BackgroundRecorder.", "HeadTree.")
"""Hops of the host's other tasks (the file watcher's long poll and its filter, the
background recording), timed alongside: not the climb's own, kept apart in the table."""
_RUN_SYNC = anyio.to_thread.run_sync


def _name(func: Callable[..., Any]) -> str:
    inner = func.func if isinstance(func, partial) else func
    return str(getattr(inner, "__qualname__", None) or repr(inner))


async def _timed_run_sync(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    marks: dict[str, float] = {}

    def inner(*a: Any) -> Any:
        marks["start"] = time.perf_counter()
        try:
            return func(*a)
        finally:
            marks["end"] = time.perf_counter()

    called = time.perf_counter()
    try:
        return await _RUN_SYNC(inner, *args, **kwargs)
    finally:
        back = time.perf_counter()
        start, end = marks.get("start", back), marks.get("end", back)
        HOPS.append(
            {
                "fn": _name(func),
                "to_thread_s": start - called,
                "run_s": end - start,
                "back_s": back - end,
            }
        )


async def rounds(root: Path, count: int) -> list[dict[str, Any]]:
    habitat, stack = await _open_warm(root)
    anyio.to_thread.run_sync = _timed_run_sync  # type: ignore[assignment]
    rows: list[dict[str, Any]] = []
    command: list[str] | None = None
    try:
        for i, rel in enumerate(_modules(root, "src", count)):
            _reset(root)
            if command is not None:
                _dmypy_request(command)  # the daemon sees the reset, unmeasured
            _append(root, rel, f"_habitat_phase_{i}: int = {i}")
            HOPS.clear()
            wall, rung, _ = await _one(habitat, "compile.project")
            hops = list(HOPS)
            command = rung.command
            _reset(root)
            _dmypy_request(command)
            _append(root, rel, f"_habitat_phase_again_{i}: int = {i}")
            direct, _ = _dmypy_request(command)
            rows.append(
                {
                    "file": rel,
                    "state": rung.state,
                    "wall_s": wall,
                    "rung_s": rung.duration_s,
                    "dmypy_s": direct,
                    "overhead_s": wall - direct,
                    "hops": hops,
                    "load": os.getloadavg()[0],
                }
            )
            print(
                f"[phases] {i + 1}/{count} {rel}: wall {wall * 1000:.0f} ms, daemon "
                f"{direct * 1000:.0f} ms, {len(hops)} hops waiting "
                f"{sum(h['to_thread_s'] + h['back_s'] for h in hops) * 1000:.0f} ms",
                file=sys.stderr,
                flush=True,
            )
    finally:
        anyio.to_thread.run_sync = _RUN_SYNC
        _reset(root)
        await stack.__aexit__(None, None, None)
        await stop_type_daemon(root)
    return rows


def _background(hop: dict[str, Any]) -> bool:
    return str(hop["fn"]).startswith(BACKGROUND)


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f}" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--python", default=sys.executable)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--cache", type=Path, default=cache / "agent-habitat/bench/ladder")
    parser.add_argument("--report", type=Path, help="run nothing: tabulate this JSON")
    args = parser.parse_args()
    os.environ["HABITAT_COALESCE_SECONDS"] = "0"
    os.environ["HABITAT_HOME"] = tempfile.mkdtemp(prefix="ladder-phases-")
    packaging, venv = prepare(PROJECTS["packaging"], args.cache.resolve(), args.python)
    os.environ["HABITAT_LADDER_PYTHON"] = str(venv)
    load_before = [round(x, 2) for x in os.getloadavg()]
    if args.report:
        saved = json.loads(args.report.read_text(encoding="utf-8"))
        rows, load_before = saved["rounds"], saved["load_before"]
    else:
        rows = anyio.run(rounds, packaging, args.rounds)
    per_fn: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        seen: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for hop in row["hops"]:
            for key in ("to_thread_s", "run_s", "back_s"):
                seen[hop["fn"]][key] += hop[key]
            seen[hop["fn"]]["calls"] += 1
        for fn, sums in seen.items():
            for key, value in sums.items():
                per_fn[fn][key].append(value)
    table = [
        [
            fn,
            f"{statistics.median(v['calls']):.0f}",
            _ms(v["run_s"]),
            _ms(v["to_thread_s"]),
            _ms(v["back_s"]),
        ]
        for fn, v in sorted(per_fn.items(), key=lambda kv: -statistics.median(kv[1]["run_s"]))
    ]
    waits = [
        sum(h["to_thread_s"] + h["back_s"] for h in r["hops"] if not _background(h)) for r in rows
    ]
    own = [
        sum(h["run_s"] for h in r["hops"] if not _background(h) and h["fn"] != "_request")
        for r in rows
    ]
    table += [
        [
            "(the climb's hops but the daemon request: own / waiting)",
            "",
            _ms(own),
            _ms(waits),
            "",
        ],
        ["verify wall", "", _ms([r["wall_s"] for r in rows]), "", ""],
        ["the daemon's own work (peer request)", "", _ms([r["dmypy_s"] for r in rows]), "", ""],
        ["overhead: wall − daemon", "", _ms([r["overhead_s"] for r in rows]), "", ""],
    ]
    load_after = saved["load_after"] if args.report else [round(x, 2) for x in os.getloadavg()]
    print_table(
        f"compile.project's climb, per round p50 (packaging, {len(rows)} rounds, load "
        f"{load_before[0]:.1f} → {load_after[0]:.1f})",
        ["hop", "calls", "own ms", "wait to start ms", "wait to resume ms"],
        table,
    )
    if args.report:
        return
    path = write_json(
        "ladder_climb_phases",
        {"load_before": load_before, "load_after": load_after, "rounds": rows},
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
