"""How fast the CLI answers: `habitat --version`, `habitat scene`, and `habitat mcp` (embedded
and the bridge to the host) ready to answer `initialize` — each next to `python -c pass` in
the same run.

Every sample is a fresh process (what a person or an agent pays per call), the paths
interleaved so machine noise hits all of them alike. The project has one finished run, so
`scene` shows a row; `scene --json` (the full path: the habitat opened, the models built) is
shown beside it. The bridge runs on a project of its own (a host serving the first one would
send its scene through the host); its host is started by the warm-up and stopped at the end,
and `scene` there is the scene asked of a running host.

    .venv/bin/python bench/cli_latency.py [--iterations 15]

Targets (issue 11): `--version` ≤ 3× bare Python start, `scene` ≤ 250 ms, MCP `initialize`
answered ≤ 500 ms after the server process starts. The embedded server answers `initialize`
while it is still importing the SDK (`mcp_tools.handshake`), so the time to its first
`tools/list` answer, which needs the SDK and the habitat, is shown too (no target).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import percentile, print_table, write_json

_BIN = Path(sys.executable).parent
_HABITAT = str(_BIN / "habitat")
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "cli-latency-bench", "version": "0"},
    },
}


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=True)
    return (time.perf_counter() - t0) * 1000


_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
_TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _mcp_initialize(
    env: dict[str, str], cwd: Path, *, embedded: bool, until_tools: bool = False
) -> float:
    """From the server's start to its `initialize` response line on stdout; with
    `until_tools`, the client pipelines `initialized` and `tools/list` right behind it (as
    Claude Code does) and the time runs to the `tools/list` answer."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [_HABITAT, "mcp", *(["--embedded"] if embedded else []), "--project", str(cwd)],
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    messages = [_INITIALIZE, _INITIALIZED, _TOOLS_LIST] if until_tools else [_INITIALIZE]
    want = 2 if until_tools else 1
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        proc.stdin.flush()
        while True:
            reply = json.loads(proc.stdout.readline())
            if reply.get("id") == want:
                break
        elapsed = (time.perf_counter() - t0) * 1000
        if "result" not in reply:
            raise RuntimeError(f"not a result: {reply}")
        return elapsed
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    project = Path(tempfile.mkdtemp(prefix="bench-cli-project-"))
    bridged = Path(tempfile.mkdtemp(prefix="bench-cli-bridged-"))
    env = dict(os.environ, HABITAT_HOME=tempfile.mkdtemp(prefix="bench-cli-home-"))
    for folder in (project, bridged):
        subprocess.run([_HABITAT, "run", "echo ready"], env=env, cwd=folder, capture_output=True)
    paths: dict[str, Callable[[], float]] = {
        "python -c pass": lambda: _timed([sys.executable, "-c", "pass"], env, project),
        "habitat --version": lambda: _timed([_HABITAT, "--version"], env, project),
        "habitat scene": lambda: _timed([_HABITAT, "scene"], env, project),
        "habitat scene --json": lambda: _timed([_HABITAT, "scene", "--json"], env, project),
        "mcp --embedded initialize": lambda: _mcp_initialize(env, project, embedded=True),
        "mcp --embedded tools/list": lambda: _mcp_initialize(
            env, project, embedded=True, until_tools=True
        ),
        "mcp (bridge) initialize": lambda: _mcp_initialize(env, bridged, embedded=False),
        # After the bridge's call, so its host serves this project: asked of the host.
        "habitat scene (host serving)": lambda: _timed([_HABITAT, "scene"], env, bridged),
    }
    samples: dict[str, list[float]] = {name: [] for name in paths}
    try:
        for n in range(args.warmup + args.iterations):
            for name, measure in paths.items():
                value = measure()
                if n >= args.warmup:
                    samples[name].append(value)
    finally:
        subprocess.run([_HABITAT, "host", "stop", "--project", str(bridged)], env=env, cwd=bridged)
    bare = statistics.median(samples["python -c pass"])
    medians = {name: statistics.median(values) for name, values in samples.items()}
    targets = {
        "habitat --version": ("≤ 3× python", medians["habitat --version"] <= 3 * bare),
        "habitat scene": ("≤ 250 ms", medians["habitat scene"] <= 250),
        "habitat scene (host serving)": (
            "≤ 250 ms",
            medians["habitat scene (host serving)"] <= 250,
        ),
        "mcp --embedded initialize": ("≤ 500 ms", medians["mcp --embedded initialize"] <= 500),
        "mcp (bridge) initialize": ("≤ 500 ms", medians["mcp (bridge) initialize"] <= 500),
    }
    rows = []
    for name, values in samples.items():
        target, met = targets.get(name, ("", True))
        rows.append(
            [
                name,
                f"{medians[name]:.0f}",
                f"{percentile(values, 0.9):.0f}",
                f"{min(values):.0f}",
                f"{medians[name] / bare:.1f}×",
                f"{target} {'met' if met else 'MISSED'}" if target else "",
            ]
        )
    print_table(
        f"CLI latency, {args.iterations} interleaved fresh processes each (ms)",
        ["path", "median", "p90", "min", "vs python", "target"],
        rows,
    )
    path = write_json(
        "cli_latency",
        {
            "iterations": args.iterations,
            "results": {
                name: {
                    "median_ms": round(medians[name], 1),
                    "p90_ms": round(percentile(values, 0.9), 1),
                    "min_ms": round(min(values), 1),
                }
                for name, values in samples.items()
            },
            "targets": {name: {"target": t, "met": met} for name, (t, met) in targets.items()},
        },
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
