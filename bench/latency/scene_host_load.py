"""`shell_scene` and `shell_last` through a real workspace host, its tabs writing at full
speed, many callers at once.

Issue 23 ("Under load"): with 8 tabs writing at full speed and 20 concurrent callers, the
host answered `shell_scene` with p50 357 ms and p99 2.4 s and `shell_last` with p99 2.1 s;
the target is p99 ≤ 100 ms. `scene_load.py` measures the library on its own loop; this one
measures what a client meets: a detached host (`habitat host start`'s), its JSON API over
its unix socket (the route the CLI and the MCP endpoint share a loop with), `--clients`
callers each calling `shell_scene` and `shell_last` in turn, back to back.

    .venv/bin/python bench/latency/scene_host_load.py [--tabs 8] [--clients 20] [--seconds 5]
    .venv/bin/python bench/latency/scene_host_load.py --baseline /path/to/main/src

With `--baseline`, each checkout's host is measured in a fresh process, alternately
(`--rounds`), so the machine's load falls on both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import psutil
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
from _report import percentile, print_table, run_meta, started, write_json

TARGET_P99_MS = 100.0
VERBS = ("scene", "last", "last tail")
"""`last` as a client calls it first (no window), `last tail` with `tail_lines=20`."""


async def _load(
    root: Path, tabs: int, clients: int, seconds: float, spy: str | None
) -> dict[str, list[float]]:
    from agent_habitat.errors import HabitatError
    from agent_habitat.reach import stop_host
    from agent_habitat.reach.client import HostClient
    from agent_habitat.reach.launcher import ensure_host
    from agent_habitat.shell.models import CloseArgs, RunArgs
    from agent_habitat.verbs import verb

    handle = await anyio.to_thread.run_sync(ensure_host, root)
    server = psutil.Process(handle.record.pid)
    me = psutil.Process()
    names = [f"t{i}" for i in range(tabs)]
    writers: list[psutil.Process] = []
    out: dict[str, list[float]] = {f"{p} {v}": [] for p in ("idle", "loaded") for v in VERBS}
    last = verb("last", "shell")
    try:
        async with HostClient(handle.record) as host:
            await _mcp_built(handle.record.socket)
            run, scene = verb("run", "shell"), verb("scene", "shell")
            for name in names:
                await host.call(run, RunArgs(command="seq 1 1000", tab=name))

            async def phase(label: str) -> None:
                deadline = time.perf_counter() + seconds
                before = _costs(server, me, writers)

                async def caller(i: int) -> None:
                    tab = names[i % len(names)]
                    while time.perf_counter() < deadline:
                        for name in VERBS:
                            args = _args(name, tab)
                            t0 = time.perf_counter()
                            key = f"{label} {name}"
                            try:
                                await host.call(last if name != "scene" else scene, args)
                            except HabitatError:
                                # Counted apart (its row's `calls`), never as an answer: on a
                                # box at load 30 a kept-alive connection was dropped mid-call.
                                key = f"{label} {name} FAILED"
                            elapsed = (time.perf_counter() - t0) * 1000
                            out.setdefault(key, []).append(elapsed)

                async with anyio.create_task_group() as tg:
                    for i in range(clients):
                        tg.start_soon(caller, i)
                calls = sum(
                    len(out.get(f"{label} {v}{f}", [])) for v in VERBS for f in ("", " FAILED")
                )
                after = _costs(server, me, writers)
                for what, spent in before.items():
                    if spent is not None and (now := after[what]) is not None:
                        out[f"{label} {what} ms/call"] = [(now - spent) / max(1, calls)]

            await phase("idle")
            for name in names:
                started = await host.call(
                    run, RunArgs(command="exec yes", tab=name, background=True)
                )
                if isinstance(pid := getattr(started, "pid", None), int):
                    writers.append(psutil.Process(pid))
            await anyio.sleep(1.0)  # every writer at full speed
            profiler = _spy(spy, handle.record.pid, seconds)
            try:
                await phase("loaded")
            finally:
                if profiler is not None:
                    await anyio.to_thread.run_sync(profiler.wait)
                # A background run outlives its host (by design): end the writers first.
                for name in names:
                    await host.call(verb("close", "shell"), CloseArgs(tab=name))
    finally:
        await anyio.to_thread.run_sync(stop_host, root)
    return out


def _args(name: str, tab: str) -> BaseModel:
    from agent_habitat.shell.models import LastArgs
    from agent_habitat.verbs import SceneArgs

    if name == "last":
        return LastArgs(tab=tab)
    if name == "last tail":
        return LastArgs(tab=tab, tail_lines=20)
    return SceneArgs()


async def _mcp_built(socket: str) -> None:
    """A request for `/mcp` first, as an agent's connection makes: the host builds its MCP
    side (the SDK's import, about 0.4 s of CPU holding the GIL) on the first one, or once it
    has been quiet a moment after its start. A host an agent uses has built it long before;
    without this, the build fell inside the loaded phase (the idle phase keeps it busy) and
    its GIL-held import was measured as the callers' wait."""
    import httpx2

    transport = httpx2.AsyncHTTPTransport(uds=socket)
    async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
        await http.get("/mcp", timeout=60.0)


def _costs(
    server: psutil.Process, callers: psutil.Process, writers: list[psutil.Process]
) -> dict[str, float | None]:
    """Milliseconds so far: the host's CPU (what the machine's load cannot inflate much),
    the callers' own (httpx and pydantic, one process for all of them), the writing runs'
    (`exec yes`: what the scheduler gave them against the host and its callers), and how
    long each one's threads sat runnable but not running (None where the kernel keeps no
    schedstat): where a call's wall goes besides the host's CPU."""
    return {
        "host cpu": _cpu_ms(server),
        "callers cpu": _cpu_ms(callers),
        "writers cpu": sum(_cpu_ms(w) for w in writers) if writers else None,
        "host run-queue": _waited(server),
        "callers run-queue": _waited(callers),
    }


def _cpu_ms(process: psutil.Process) -> float:
    try:
        times = process.cpu_times()
    except psutil.Error:  # a writer gone early: what it used is no longer known
        return 0.0
    return float(times.user + times.system) * 1000


def _waited(process: psutil.Process) -> float | None:
    """Milliseconds the process's threads have spent runnable but waiting for a CPU
    (`/proc/PID/task/*/schedstat`, second field, ns); None where the kernel has no schedstat."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{process.pid}/task"):
            with open(f"/proc/{process.pid}/task/{tid}/schedstat", encoding="ascii") as f:
                total += int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e6


def _spy(out: str | None, pid: int, seconds: float) -> subprocess.Popen[bytes] | None:
    """`py-spy record` of the host during the loaded phase (collapsed stacks, `--spy OUT`)."""
    if out is None:
        return None
    exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    argv = [exe, "record", "-p", str(pid), "-o", out, "--format", "raw", "-r", "200"]
    argv += ["-d", str(max(1, int(seconds)))]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _child_main(args: argparse.Namespace) -> int:
    home = Path(tempfile.mkdtemp(prefix="bench-host-home-"))
    os.environ["HABITAT_HOME"] = str(home)
    root = Path(tempfile.mkdtemp(prefix="bench-host-scene-"))
    (root / ".git").mkdir()
    print(json.dumps(anyio.run(_load, root, args.tabs, args.clients, args.seconds, args.spy)))
    return 0


def _child(label: str, src: str | None, args: argparse.Namespace) -> dict[str, list[float]]:
    env = dict(os.environ)
    if src is not None:
        # The detached host is `python -m agent_habitat.host`: it inherits PYTHONPATH too.
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    argv = [sys.executable, __file__, "--child", "--tabs", str(args.tabs)]
    argv += ["--clients", str(args.clients), "--seconds", str(args.seconds)]
    if args.spy:
        argv += ["--spy", args.spy]
    print(f"measuring {label} …", file=sys.stderr)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"the {label} measurement failed (exit {done.returncode}): see above")
    samples: dict[str, list[float]] = json.loads(done.stdout)
    return samples


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "calls": float(len(values)),
        "p50_ms": percentile(values, 0.50),
        "p90_ms": percentile(values, 0.90),
        "p99_ms": percentile(values, 0.99),
        "max_ms": max(values),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabs", type=int, default=8)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--baseline", metavar="SRC", help="another checkout's `src` folder")
    parser.add_argument("--rounds", type=int, default=2, help="alternations with --baseline")
    parser.add_argument(
        "--spy", metavar="OUT", help="py-spy record the host's loaded phase into OUT (raw stacks)"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help="also write the JSON here (docs/bench-data/)")
    args = parser.parse_args(argv)
    start = started()
    if args.child:
        return _child_main(args)
    checkouts: dict[str, str | None] = {"this checkout": None}
    if args.baseline:
        checkouts = {"baseline": str(Path(args.baseline).resolve()), **checkouts}
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in checkouts}
    loads: list[float] = []
    for _ in range(args.rounds if args.baseline else 1):
        for name, src in checkouts.items():
            for key, values in _child(name, src, args).items():
                samples[name].setdefault(key, []).extend(values)
            loads.append(os.getloadavg()[0])
    rows: list[list[str]] = []
    summary: dict[str, dict[str, dict[str, float]]] = {}
    for name, keyed in samples.items():
        summary[name] = {key: _stats(values) for key, values in keyed.items() if values}
        for key, values in keyed.items():
            if key.endswith("ms/call"):
                summary[name][key] = {"mean": sum(values) / len(values)}
        for key, stats in summary[name].items():
            if "mean" in stats:
                rows.append([name, key, "", f"{stats['mean']:.2f}", "", "", ""])
                continue
            cells = [f"{stats[k]:.1f}" for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms")]
            rows.append([name, key, str(int(stats["calls"])), *cells])
    title = (
        f"through the host: {args.tabs} tabs writing, {args.clients} callers, "
        f"{args.seconds:g} s a phase"
    )
    columns = ["checkout", "phase / verb", "calls", "p50 ms", "p90 ms", "p99 ms", "max ms"]
    print_table(title, columns, rows)
    mine = summary["this checkout"]
    for verb_name in VERBS:
        p99 = mine[f"loaded {verb_name}"]["p99_ms"]
        verdict = "met" if p99 <= TARGET_P99_MS else "NOT met"
        print(f"shell_{verb_name} loaded p99 {p99:.1f} ms; target ≤ {TARGET_P99_MS:g}: {verdict}")
        if args.baseline:
            base = summary["baseline"][f"loaded {verb_name}"]
            here = mine[f"loaded {verb_name}"]
            print(
                f"  baseline / this checkout: p50 {base['p50_ms'] / here['p50_ms']:.1f}×, "
                f"p99 {base['p99_ms'] / here['p99_ms']:.1f}×"
            )
    print(f"load average after each measurement: {', '.join(f'{x:.1f}' for x in loads)}")
    path = write_json(
        "scene_host_load",
        {
            **run_meta(start),
            "tabs": args.tabs,
            "clients": args.clients,
            "seconds": args.seconds,
            "baseline": args.baseline,
            "target_p99_ms": TARGET_P99_MS,
            "load_averages": loads,
            "checkouts": summary,
        },
        args.out,
    )
    print(f"JSON: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
