"""Side-by-side MCP shell benchmark over real stdio, through the official Python client.

`echo hi` round trips (median, p90, p95) and the bytes a ~200 kB command hands back to the
agent, for `habitat mcp --embedded`, the bridge `habitat mcp` and the host's Streamable HTTP, the
PyPI `mcp-shell-server` and DesktopCommander, with raw `bash -c` as the floor. Peers are installed
into a cache folder (default `.bench-cache/`, gitignored).

    .venv/bin/python bench/latency/mcp_latency.py [--iterations 30] [--warmup 5]

`--baseline SRC` adds `habitat-baseline`: the same server from another checkout's `src`
folder (say `git archive main src | tar -x -C /tmp/base`), in the same rotation, so a
change is measured against what it changes on the same load, call by call.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO, cast

import anyio
import httpx2
import mcp.types as types
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import started
from peers import (
    BIG_COMMAND,
    ECHO_COMMAND,
    ServerSpec,
    ToolCall,
    habitat_spec,
    install_peers,
    say,
)

logger = logging.getLogger("bench.mcp_latency")

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CACHE = REPO_ROOT / ".bench-cache"
CONNECT_TIMEOUT_SECONDS = 60.0
CALL_TIMEOUT_SECONDS = 30.0
BIG_REPEATS = 3
# Targets: habitat at most 0.6x mcp-shell-server's median (issue 25; issue 3 asked 1.5x), 10x
# faster than DesktopCommander (issue 3).
TARGET_HABITAT_VS_SHELL_SERVER = 0.6
TARGET_DESKTOP_COMMANDER_VS_HABITAT = 10.0


@dataclass(frozen=True)
class HttpSpec(ServerSpec):
    """A server reached over Streamable HTTP at `url` instead of launched over stdio."""

    url: str = ""


def habitat_host_specs(base: ServerSpec, workdir: Path, home: Path) -> list[ServerSpec]:
    """`habitat mcp` bridged to the workspace host, and the host's /mcp over TCP directly.

    Both reach the same host, which the bridge would start on demand; it is started here
    (with TCP, for the HTTP row) so neither row pays for the start. `stop_habitat_host`
    stops it after the run.
    """
    if base.params is None:
        return []
    from agent_habitat.reach import ensure_host
    from agent_habitat.reach.launcher import host_files

    # A home of its own: on the embedded row's, the host and that server shared one
    # workspace's state.db and tabs, each waiting on the other's writes.
    os.environ["HABITAT_HOME"] = str(home / "habitat-home-host")
    record = ensure_host(workdir, tcp="127.0.0.1:0").record
    env = {**(base.params.env or {}), "HABITAT_HOME": os.environ["HABITAT_HOME"]}
    bridged = replace(
        base,
        name="habitat-bridged",
        params=base.params.model_copy(update={"args": ["mcp"], "env": env}),
    )
    url = f"{record.tcp}/mcp"
    http = HttpSpec(
        "habitat-http", base.echo, base.big, version=base.version, url=url, params=base.params
    )
    http.notes.append(f"token {host_files(workdir).token()[:4]}… in the Authorization header")
    return [bridged, http]


def habitat_baseline_spec(base: ServerSpec, src: Path) -> ServerSpec:
    """`habitat mcp --embedded` run from another checkout's `src` (PYTHONPATH first, so
    its package shadows this venv's), with its own HABITAT_HOME."""
    if base.params is None:
        return replace(base, name="habitat-baseline")
    if not (src / "agent_habitat" / "__main__.py").is_file():
        reason = f"--baseline {src}: no agent_habitat/__main__.py there; pass a checkout's src"
        return ServerSpec("habitat-baseline", base.echo, base.big, unavailable=reason)
    env = dict(base.params.env or {})
    env["PYTHONPATH"] = str(src.resolve())
    env["HABITAT_HOME"] = env.get("HABITAT_HOME", "habitat-home") + "-baseline"
    params = base.params.model_copy(
        update={
            "command": sys.executable,
            "args": ["-m", "agent_habitat", "mcp", "--embedded"],
            "env": env,
        }
    )
    spec = replace(base, name="habitat-baseline", params=params, notes=[])
    spec.notes.append(f"agent_habitat from {src.resolve()}")
    return spec


def habitat_baseline_bridged_spec(baseline: ServerSpec) -> ServerSpec:
    """The baseline checkout's default `habitat mcp` (its bridge, and the host that bridge
    starts from the same `src`), with a home of its own: the change's bridged row is
    measured against it on the same load, call by call."""
    if baseline.params is None:
        return replace(baseline, name="habitat-baseline-bridged", notes=[])
    env = dict(baseline.params.env or {})
    env["HABITAT_HOME"] = env.get("HABITAT_HOME", "habitat-home") + "-bridged"
    params = baseline.params.model_copy(update={"args": ["-m", "agent_habitat", "mcp"], "env": env})
    spec = replace(baseline, name="habitat-baseline-bridged", params=params, notes=[])
    spec.notes.append(f"{baseline.notes[0]}; its host started by its bridge")
    return spec


def stop_baseline_host(spec: ServerSpec, workdir: Path) -> None:
    """Stop the host the baseline's bridge started (its home is not this process's)."""
    if spec.params is None or not spec.params.env:
        return
    from agent_habitat.reach import stop_host

    saved = os.environ.get("HABITAT_HOME")
    os.environ["HABITAT_HOME"] = spec.params.env["HABITAT_HOME"]
    try:
        stop_host(workdir)
    finally:
        if saved is None:
            os.environ.pop("HABITAT_HOME", None)
        else:
            os.environ["HABITAT_HOME"] = saved


def stop_habitat_host(workdir: Path) -> None:
    from agent_habitat.reach import stop_host

    stop_host(workdir)


@dataclass
class Latency:
    """Round-trip times of one call, in milliseconds."""

    samples_ms: list[float]
    median_ms: float = 0.0
    p90_ms: float = 0.0
    p95_ms: float = 0.0
    min_ms: float = 0.0
    mean_ms: float = 0.0

    def __post_init__(self) -> None:
        ordered = sorted(self.samples_ms)
        self.median_ms = statistics.median(ordered)
        # Nearest-rank p90 and p95: observed samples, no interpolation.
        self.p90_ms = ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]
        self.p95_ms = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
        self.min_ms = ordered[0]
        self.mean_ms = statistics.fmean(ordered)


@dataclass
class Payload:
    """What one tool result hands back to the agent, in UTF-8 bytes."""

    text_bytes: int
    structured_bytes: int
    other_bytes: int
    total_bytes: int
    is_error: bool
    has_last_line: bool
    call_ms: float
    repeats_total_bytes: list[int] = field(default_factory=list)
    """Total bytes of every repeat: a server whose answer depends on timing varies here."""


@dataclass
class ServerResult:
    """Everything measured for one server; `status` is ok, unavailable or error."""

    name: str
    status: str
    version: str = ""
    command: list[str] = field(default_factory=list)
    reason: str = ""
    connect_ms: float | None = None
    latency: Latency | None = None
    big_output: Payload | None = None
    notes: list[str] = field(default_factory=list)


def bash_floor(iterations: int, warmup: int) -> Latency:
    """Raw `bash -c 'echo hi'` through subprocess: the cost no server can beat."""
    samples: list[float] = []
    for i in range(warmup + iterations):
        start = time.perf_counter()
        subprocess.run(["bash", "-c", ECHO_COMMAND], capture_output=True, check=True)
        if i >= warmup:
            samples.append((time.perf_counter() - start) * 1000)
    return Latency(samples)


def _json_bytes(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def payload_of(result: types.CallToolResult, call_ms: float, last_line: str) -> Payload:
    """Count what the agent receives: text blocks, structured content, anything else."""
    text = [c.text for c in result.content if isinstance(c, types.TextContent)]
    other = [c for c in result.content if not isinstance(c, types.TextContent)]
    text_bytes = sum(len(t.encode()) for t in text)
    structured = result.structured_content
    structured_bytes = _json_bytes(structured) if structured is not None else 0
    other_bytes = sum(len(c.model_dump_json(by_alias=True).encode()) for c in other)
    return Payload(
        text_bytes=text_bytes,
        structured_bytes=structured_bytes,
        other_bytes=other_bytes,
        total_bytes=text_bytes + structured_bytes + other_bytes,
        is_error=bool(result.is_error),
        # The body is in the structured content (docs/result-shape.md), else in the text.
        has_last_line=last_line in "\n".join([*text, _body(structured)]).splitlines(),
        call_ms=call_ms,
    )


def _body(structured: Any) -> str:
    body = structured.get("output", "") if isinstance(structured, dict) else ""
    return body if isinstance(body, str) else ""


def _check_echo(result: types.CallToolResult) -> None:
    text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
    text += _body(result.structured_content)
    if result.is_error or "hi" not in text:
        raise RuntimeError(f"`{ECHO_COMMAND}` returned an unexpected result: {text[:300]!r}")


async def _timed_call(client: Client, call: ToolCall) -> tuple[types.CallToolResult, float]:
    start = time.perf_counter()
    result = await client.call_tool(call.name, call.arguments)
    return result, (time.perf_counter() - start) * 1000


@dataclass
class _Session:
    """A connected server taking part in the rotation."""

    spec: ServerSpec
    result: ServerResult
    client: Client
    log: Path
    samples: list[float] = field(default_factory=list)


def _fail(session: _Session, exc: BaseException) -> None:
    logger.exception("%s failed", session.spec.name)
    session.result.status = "error"
    session.result.reason = f"{_describe(exc)}; server stderr: {_tail(session.log)}"


async def _start(spec: ServerSpec, stack: AsyncExitStack, logs: Path) -> _Session | ServerResult:
    """Spawn and initialise one server; a server that cannot start becomes a row with a reason."""
    if spec.params is None:
        say(f"{spec.name}: unavailable: {spec.unavailable}")
        return ServerResult(spec.name, "unavailable", spec.version, reason=spec.unavailable or "")
    params = spec.params
    log = logs / f"{spec.name}.stderr.log"
    result = ServerResult(spec.name, "ok", spec.version, [params.command, *params.args])
    result.notes.extend(spec.notes)
    try:
        errlog = await stack.enter_async_context(await anyio.open_file(log, "w", encoding="utf-8"))
        start = time.perf_counter()
        if isinstance(spec, HttpSpec):
            result.command = [spec.url]
            client = await _http_client(spec, stack)
        else:
            transport = stdio_client(params, errlog=cast(TextIO, errlog.wrapped))
            client = Client(transport, mode="legacy", read_timeout_seconds=CALL_TIMEOUT_SECONDS)
        await stack.enter_async_context(client)
    except Exception as exc:  # boundary: a server that cannot start must not stop the others
        logger.exception("%s failed to start", spec.name)
        result.status = "error"
        result.reason = f"{_describe(exc)}; server stderr: {_tail(log)}"
        return result
    result.connect_ms = (time.perf_counter() - start) * 1000
    say(f"{spec.name}: connected (server stderr in {log})")
    return _Session(spec, result, client, log)


async def _http_client(spec: HttpSpec, stack: AsyncExitStack) -> Client:
    from agent_habitat.reach.launcher import host_files

    token = host_files(Path(spec.params.cwd or ".")).token() if spec.params else ""
    http = await stack.enter_async_context(
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=None)
    )
    streams = streamable_http_client(spec.url, http_client=http)
    return Client(streams, mode="legacy", read_timeout_seconds=CALL_TIMEOUT_SECONDS)


async def _rotate(sessions: list[_Session], iterations: int, warmup: int) -> None:
    # Round-robin, starting one further each round: load that comes and goes on the machine
    # then falls on every server alike instead of on whichever ran during the spike.
    for i in range(warmup + iterations):
        k = i % len(sessions)
        for session in sessions[k:] + sessions[:k]:
            if session.result.status != "ok":
                continue
            try:
                result, elapsed = await _timed_call(session.client, session.spec.echo)
                _check_echo(result)
            except Exception as exc:  # boundary: one server's failure must not stop the others
                _fail(session, exc)
                continue
            if i >= warmup:
                session.samples.append(elapsed)


async def _big_output(session: _Session) -> None:
    """Repeat the big call; keep the median repeat by size and every size."""
    payloads: list[Payload] = []
    try:
        for _ in range(BIG_REPEATS):
            result, elapsed = await _timed_call(session.client, session.spec.big)
            payloads.append(payload_of(result, elapsed, BIG_COMMAND.split()[-1]))
    except Exception as exc:  # boundary: one server's failure must not stop the others
        _fail(session, exc)
        return
    payloads.sort(key=lambda p: p.total_bytes)
    chosen = payloads[len(payloads) // 2]
    chosen.repeats_total_bytes = [p.total_bytes for p in payloads]
    session.result.big_output = chosen


async def run_all(
    specs: list[ServerSpec], iterations: int, warmup: int, logs: Path
) -> list[ServerResult]:
    """Connect every server, interleave their echo calls, then time the big output on each."""
    results: list[ServerResult] = []
    # Each request is bounded by the client's read timeout; this bounds the whole run.
    calls = len(specs) * (warmup + iterations + BIG_REPEATS)
    budget = len(specs) * CONNECT_TIMEOUT_SECONDS + calls * CALL_TIMEOUT_SECONDS
    try:
        with anyio.fail_after(budget):
            async with AsyncExitStack() as stack:
                sessions: list[_Session] = []
                for spec in specs:
                    started = await _start(spec, stack, logs)
                    if isinstance(started, _Session):
                        sessions.append(started)
                        started = started.result
                    results.append(started)
                if sessions:
                    say(f"timing {warmup} warm-up + {iterations} `{ECHO_COMMAND}` per server")
                    await _rotate(sessions, iterations, warmup)
                for session in sessions:
                    if session.samples:
                        session.result.latency = Latency(session.samples)
                    if session.result.status == "ok":
                        await _big_output(session)
    except Exception:  # boundary: a run cut short still reports what it measured
        logger.exception("the run was cut short; reporting what was measured")
    return results


def _describe(exc: BaseException) -> str:
    # Task groups wrap the real failure; name the innermost one.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "(none)"
    return " | ".join(lines[-3:]) or "(empty)"


def _ratio(top: float | None, bottom: float | None, target: float, at_most: bool) -> dict[str, Any]:
    value = top / bottom if top and bottom else None
    met = None if value is None else (value <= target if at_most else value >= target)
    return {"ratio": value, "target": f"{'<=' if at_most else '>='} {target}", "met": met}


def ratios(results: list[ServerResult]) -> dict[str, dict[str, Any]]:
    """Median ratios against the issue's targets; None where a side did not finish."""
    med = {r.name: r.latency.median_ms for r in results if r.latency and r.status == "ok"}
    habitat = med.get("habitat")
    bridged = med.get("habitat-bridged")
    return {
        # Issue 10's target: the bridge adds at most 2 ms to the embedded median.
        "habitat_bridged_vs_embedded": _ratio(
            bridged, habitat, (habitat + 2.0) / habitat if habitat else 1.0, at_most=True
        ),
        "habitat_vs_mcp_shell_server": _ratio(
            habitat, med.get("mcp-shell-server"), TARGET_HABITAT_VS_SHELL_SERVER, at_most=True
        ),
        # The default server a user configures (issue 25): the bridge to the host.
        "habitat_bridged_vs_mcp_shell_server": _ratio(
            bridged, med.get("mcp-shell-server"), TARGET_HABITAT_VS_SHELL_SERVER, at_most=True
        ),
        # A change should not make the server slower than the checkout it changes.
        "habitat_vs_baseline": _ratio(habitat, med.get("habitat-baseline"), 1.0, at_most=True),
        "habitat_bridged_vs_baseline_bridged": _ratio(
            bridged, med.get("habitat-baseline-bridged"), 1.0, at_most=True
        ),
        "desktop_commander_vs_habitat": _ratio(
            med.get("DesktopCommander"), habitat, TARGET_DESKTOP_COMMANDER_VS_HABITAT, at_most=False
        ),
    }


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def render(
    floor: Latency, results: list[ServerResult], rat: dict[str, dict[str, Any]], raw_big: int
) -> None:
    """Print the latency, ratio and output-economy tables to stdout."""
    # Wide enough for every column when piped to a file or a log.
    console = Console(width=None if sys.stdout.isatty() else 110)
    lat = Table(title=f"`{ECHO_COMMAND}` round trip over stdio (ms)")
    for col in ("server", "status", "median", "p90", "p95", "min", "connect"):
        lat.add_column(col, justify="left" if col in ("server", "status") else "right")
    lat.add_row(
        "bash -c (floor)",
        "ok",
        _ms(floor.median_ms),
        _ms(floor.p90_ms),
        _ms(floor.p95_ms),
        _ms(floor.min_ms),
    )
    for r in results:
        x = r.latency
        lat.add_row(
            r.name,
            r.status,
            _ms(x.median_ms if x else None),
            _ms(x.p90_ms if x else None),
            _ms(x.p95_ms if x else None),
            _ms(x.min_ms if x else None),
            _ms(r.connect_ms),
        )
    console.print(lat)
    rt = Table(title="median ratios vs targets")
    for col in ("ratio", "value", "target", "met"):
        rt.add_column(col)
    for key, row in rat.items():
        value = "-" if row["ratio"] is None else f"{row['ratio']:.2f}x"
        met = "n/a" if row["met"] is None else ("yes" if row["met"] else "NO")
        rt.add_row(key, value, row["target"], met)
    console.print(rt)
    eco = Table(title=f"output-token economy: `{BIG_COMMAND}` ({raw_big:,} bytes raw)")
    for col in ("server", "text", "structured", "total", "% of raw", "last line", "range"):
        eco.add_column(col, justify="left" if col == "server" else "right")
    for r in results:
        b = r.big_output
        if b is None:
            eco.add_row(r.name, "-", "-", "-", "-", r.status)
            continue
        share = f"{100 * b.total_bytes / raw_big:.1f}%"
        eco.add_row(
            r.name,
            f"{b.text_bytes:,}",
            f"{b.structured_bytes:,}",
            f"{b.total_bytes:,}",
            share,
            "yes" if b.has_last_line else "no",
            f"{min(b.repeats_total_bytes):,}-{max(b.repeats_total_bytes):,}",
        )
    console.print(eco)
    for r in results:
        for line in ([r.reason] if r.reason else []) + r.notes:
            console.print(f"{r.name}: {line}", markup=False, highlight=False)


SERVER_NAMES = (
    "habitat",
    "habitat-bridged",
    "habitat-http",
    "mcp-shell-server",
    "DesktopCommander",
)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--iterations", type=int, default=30, help="timed calls per server")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls first")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument(
        "--output", type=Path, default=REPO_ROOT / "bench" / "results" / "mcp_latency.json"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="another checkout's src folder: adds habitat-baseline to the rotation",
    )
    parser.add_argument(
        "--servers",
        default=",".join(SERVER_NAMES),
        help=f"comma-separated subset of {', '.join(SERVER_NAMES)}",
    )
    args = parser.parse_args(argv)
    if args.iterations < 1 or args.warmup < 0:
        parser.error("--iterations must be >= 1 and --warmup >= 0")
    unknown = set(args.servers.split(",")) - set(SERVER_NAMES)
    if unknown:
        parser.error(f"--servers: unknown {sorted(unknown)}; choose from {SERVER_NAMES}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="bench: %(levelname)s %(message)s")
    args = parse_args(argv)
    start = started()  # the commit and the load when the run starts, for the JSON
    wanted = set(args.servers.split(","))
    output: Path = args.output
    output.parent.mkdir(parents=True, exist_ok=True)
    logs = output.parent / "logs"
    logs.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="habitat-bench-") as tmp:
        scratch = Path(tmp)
        workdir = scratch / "work"
        workdir.mkdir()
        base = habitat_spec(workdir, scratch)
        specs = [base] if "habitat" in wanted else []
        baseline_bridged = None
        if args.baseline is not None:
            specs.append(baseline := habitat_baseline_spec(base, args.baseline))
            if "habitat-bridged" in wanted:
                specs.append(baseline_bridged := habitat_baseline_bridged_spec(baseline))
        hosted = {"habitat-bridged", "habitat-http"} & wanted
        if hosted:
            specs += [s for s in habitat_host_specs(base, workdir, scratch) if s.name in hosted]
        peer_home = scratch / "peer-home"
        peer_home.mkdir()
        if args.cache.resolve() == DEFAULT_CACHE:
            say(f"cache folder {DEFAULT_CACHE.name}/ at the repo root is gitignored")
        specs += install_peers(args.cache.resolve(), workdir, peer_home, wanted)
        say(f"floor: bash -c '{ECHO_COMMAND}' x {args.iterations}")
        floor = bash_floor(args.iterations, args.warmup)
        raw_big = len(subprocess.run(BIG_COMMAND.split(), capture_output=True, check=True).stdout)
        try:
            results = anyio.run(run_all, specs, args.iterations, args.warmup, logs)
        finally:
            if hosted:
                stop_habitat_host(workdir)
            if baseline_bridged is not None:
                stop_baseline_host(baseline_bridged, workdir)
    rat = ratios(results)
    render(floor, results, rat, raw_big)
    report = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        **start,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "iterations": args.iterations,
        "warmup": args.warmup,
        "client": "mcp (Python SDK) Client over stdio, mode=legacy (initialize handshake)",
        "host": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            # Other work on the machine moves every number; this says how busy it was.
            "loadavg_at_end": os.getloadavg(),
        },
        "echo_command": ECHO_COMMAND,
        "big_command": BIG_COMMAND,
        "big_raw_bytes": raw_big,
        "floor_bash": asdict(floor),
        "servers": [asdict(r) for r in results],
        "ratios": rat,
    }
    output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    say(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
