"""How fast the CLI answers: every command with and without a host, `--version`, and
`habitat mcp` (embedded and the bridge to the host) ready to answer — each next to
`python -c pass` in the same run.

Every sample is a fresh process (what a person or an agent pays per call), the paths
interleaved so machine noise hits all of them alike: one round is `python -c pass`, then
every path once. Two projects: one with no host (the embedded path: the state opened in the
process) and one a host serves (the CLI asks it over its socket, `cli.host_verbs`). Each
has a tab with a finished run, a tab kept busy by an interactive `cat` on the host side
(for `input`), and a tab `gone` that `close` closes (it is opened again, unmeasured, before
each sample). The bridge runs on a third project (its host is started by the warm-up).
Python's bytecode cache is on for the measured processes, as in a user's install, even when
the calling shell sets `PYTHONDONTWRITEBYTECODE`.

    .venv/bin/python bench/latency/cli_latency.py [--iterations 30] [--only run,terminal,mcp,bridge]
        [--baseline /tmp/old/src] [--out docs/bench-data/cli_latency-DATE-first-usable.json]

`--baseline SRC` measures every verb row a second time, right after it in the same round,
with another checkout's `agent_habitat` (`SRC`: the folder holding it, e.g. from
`git archive REV src | tar -x -C /tmp/old`; first on PYTHONPATH, so it shadows this venv's,
and the hosts it starts inherit it; this checkout's src is put first on PYTHONPATH
likewise, so both look up their imports alike; the baseline's bytecode is compiled first, as
an install compiles it), on projects and a HABITAT_HOME of its own: rows
"… [baseline]", and each verb row's median over its baseline's ("vs base"). The terminal,
host start and MCP rows are measured for this checkout only.

A person at a terminal with no host running (stdin and stderr a terminal, stdout a pipe:
`_at_a_terminal`): the first `habitat run 'echo hi'` answers in its own process and then
starts the workspace host (`cli.host_start`); "right after" is the next one typed at once (it
waits for the starting host); "host up" one more, then the host is stopped (unmeasured) so the
next round's first finds none. "host start" spawns `python -m agent_habitat.host` and times it
to its record in `host.lock` (listening), with the host's own CPU time until then, to tell
CPU from waiting on a loaded machine.

The first usable moment (issue 24), the first `tools/list` answer after start: embedded, the
bridge with a host, the cold bridge (it starts the host; stopped before each sample) and the
peer mcp-shell-server (bench/peers.py, pinned, in `--peer-cache`), timed alike.

Targets (issue 25): through a host, `habitat run 'echo hi'` p50 ≤ 100 ms on a quiet machine
and ≤ 4× `python -c pass`; no command adds more than 150 ms to the work it asks for (each
row's median minus `python -c pass`'s, shown as "added", with a host and without). Issue 24:
the first `tools/list` answer ≤ 500 ms after start, embedded and through the bridge with a host
running; `initialize` ≤ 500 ms (issue 11's) is kept as the old measure. A fixed-bound target
gets its verdict from the 95 % interval of the median ('undecided' when it straddles the
bound). Issue 11's: `--version` ≤ 3× bare Python, `scene` ≤ 250 ms. The first command at a
terminal: no slower than the one-shot path (≤ 1.1× `run 'echo hi' (no host)` in the same run).
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import median_ci, percentile, print_table, run_meta, started, verdict, write_json

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
    env: dict[str, str],
    cwd: Path,
    *,
    embedded: bool,
    until_tools: bool = False,
    argv: list[str] | None = None,
) -> float:
    """From the server's start to its `initialize` response line on stdout; with
    `until_tools`, the client pipelines `initialized` and `tools/list` right behind it (as
    Claude Code does) and the time runs to the `tools/list` answer: the first moment the
    agent can use the server (issue 24). `argv` starts another server (the peer)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv or [_HABITAT, "mcp", *(["--embedded"] if embedded else []), "--project", str(cwd)],
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


_VERBS: list[tuple[str, list[str]]] = [
    ("run 'echo hi'", ["run", "echo hi"]),
    ("run --json", ["run", "echo hi", "--json"]),
    ("run --help", ["run", "--help"]),
    ("rerun", ["rerun"]),
    ("last", ["last"]),
    ("last --json", ["last", "--json"]),
    ("history", ["history", "--limit", "5"]),
    ("scene", ["scene"]),
    ("scene --json", ["scene", "--json"]),
    ("which", ["which"]),
    ("wait (run ended)", ["wait", "--timeout-seconds", "5"]),
    ("kill (nothing runs)", ["kill", "main"]),
    ("close", ["close", "gone"]),
    ("input", ["input", "repl", "x\n"]),
    ("events", ["events", "--since", "0"]),
    ("status", ["status"]),
    ("status --json", ["status", "--json"]),
    ("cancel (nothing runs)", ["cancel"]),
    ("verify (nothing to verify)", ["verify", "--policy", "minimal"]),
    ("project", ["project"]),
    ("trust", ["trust"]),
    ("host status", ["host", "status"]),
    ("host token", ["host", "token"]),
    ("host start (it runs)", ["host", "start"]),
    ("rules", ["rules", "--for", "claude"]),
    ("rules --write", ["rules", "--for", "claude", "--write"]),
    ("init", ["init", "--client", "claude"]),
    ("dashboard --no-browser", ["dashboard", "--no-browser"]),
    ("help (habitat --help)", ["--help"]),
]
"""Each verb's command line (`--project` is added). `input` needs a run that holds its stdin
open, which only a host can keep, and `host start` with no host is the "host start" row
(`terminal`): both are measured with a host only. `verify` in a folder with nothing to verify
says so (exit 3: no rung could run) after taking the snapshot. `dashboard` with no host
starts one (with TCP): that host is stopped after each sample, unmeasured. `rules --write`
and `init` write their file once and then find it up to date."""
_HOST_ONLY = frozenset({"input", "host start (it runs)"})


_MADE: list[str] = []
"""The folders this run made (homes and projects): removed at its end, hosts stopped first."""


def _made(prefix: str) -> str:
    folder = tempfile.mkdtemp(prefix=prefix)
    _MADE.append(folder)
    return folder


def _env() -> dict[str, str]:
    env = dict(os.environ, HABITAT_HOME=_made("bench-cli-home-"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install caches bytecode
    return env


BASELINE = " [baseline]"
"""The suffix of a row measured with `--baseline`'s code."""


def _baseline_env(src: Path, env: dict[str, str]) -> dict[str, str]:
    """The environment of the baseline's commands: its package first on PYTHONPATH (the
    `habitat` script of this venv then imports it), a HABITAT_HOME of its own. Its bytecode
    is compiled first, as an install compiles it. `env`, this checkout's, gets its own src
    first on PYTHONPATH too: every import then looks in one folder more on both sides."""
    if not (src / "agent_habitat" / "__main__.py").is_file():
        raise SystemExit(f"--baseline {src}: no agent_habitat/__main__.py there; pass a src folder")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
    import agent_habitat

    env["PYTHONPATH"] = str(Path(agent_habitat.__file__).resolve().parents[1])
    base = _env()
    base["PYTHONPATH"] = str(src.resolve())
    base["HABITAT_HOME"] = _made("bench-cli-home-baseline-")
    return base


class Side:
    """One checkout's code under measurement: its environment and its two projects (one no
    host serves, one a host serves), and the suffix of its rows."""

    def __init__(self, env: dict[str, str], suffix: str) -> None:
        self.env = env
        self.suffix = suffix
        self.bare, self.hosted = (
            Path(_made(f"bench-cli-{name}{'-base' if suffix else ''}-"))
            for name in ("bare", "hosted")
        )

    def prepare(self) -> None:
        """A finished run in each project, the host of `hosted` up, its tab `repl` busy."""
        for folder in (self.bare, self.hosted):
            _quiet([_HABITAT, "run", "echo ready", "--project", str(folder)], self.env, folder)
        _quiet([_HABITAT, "host", "start", "--project", str(self.hosted)], self.env, self.hosted)
        repl = ["run", "cat", "--tab", "repl", "--interactive", "--background"]
        _quiet([_HABITAT, *repl, "--project", str(self.hosted)], self.env, self.hosted)

    def close(self) -> None:
        _quiet([_HABITAT, "kill", "repl", "--project", str(self.hosted)], self.env, self.hosted)
        for folder in (self.bare, self.hosted):  # bare: a dashboard's, if cut short
            _stop(self.env, folder)


def _quiet(argv: list[str], env: dict[str, str], cwd: Path) -> None:
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)


def _timed_any(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """As `_timed`, for commands whose exit code says something (`kill` with nothing to
    kill exits 1): timed whatever it is."""
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    return (time.perf_counter() - t0) * 1000


def _at_a_terminal(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """As `_timed_any`, with a terminal on stdin and stderr, as a person types it (stdout a
    pipe): the CLI starts the workspace host behind a shell command when none runs."""
    leader, follower = pty.openpty()
    try:
        t0 = time.perf_counter()
        subprocess.run(
            argv,
            env={k: v for k, v in env.items() if k != "CI"},
            cwd=cwd,
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=follower,
            check=False,
        )
        return (time.perf_counter() - t0) * 1000
    finally:
        os.close(leader)
        os.close(follower)


def _stop(env: dict[str, str], root: Path) -> None:
    _quiet([_HABITAT, "host", "stop", "--project", str(root)], env, root)


HOST_CPU_MS: list[float] = []
"""The host's own CPU time when it published its record, per start."""
HOST_RUNQUEUE_MS: list[float] = []
"""The time the host was runnable but waited for a CPU (others' load) until then, per start."""


def _host_start(env: dict[str, str], root: Path) -> float:
    """From spawning `python -m agent_habitat.host` to its record in `host.lock` (it listens),
    the host's CPU time until then kept in HOST_CPU_MS; then it is stopped, unmeasured."""
    from agent_habitat.reach.launcher import find_host

    old = {k: os.environ.get(k) for k in ("HABITAT_HOME",)}
    os.environ["HABITAT_HOME"] = env["HABITAT_HOME"]  # find_host reads it
    log = tempfile.TemporaryFile()
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_habitat.host", "--project", str(root)],
            env=env,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
        while find_host(root) is None:
            if proc.poll() is not None:
                log.seek(0)
                said = log.read().decode(errors="replace").strip().splitlines()[-5:]
                raise RuntimeError(f"the host exited with {proc.returncode}: {said}")
            time.sleep(0.005)
        elapsed = (time.perf_counter() - t0) * 1000
        # schedstat: time on a CPU and time runnable but waiting for one (ns); what is left of
        # the wall was spent blocked (sleeping, waiting on a file or a lock).
        on_cpu, runnable, _ = Path(f"/proc/{proc.pid}/schedstat").read_text().split()
        HOST_CPU_MS.append(int(on_cpu) / 1e6)
        HOST_RUNQUEUE_MS.append(int(runnable) / 1e6)
    finally:
        log.close()
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    _stop(env, root)
    proc.wait()
    return elapsed


def _cold_bridge(env: dict[str, str], cold: Path) -> float:
    """The first `habitat mcp` of a workspace no host serves: the bridge starts the host."""
    _stop(env, cold)
    return _mcp_initialize(env, cold, embedded=False, until_tools=True)


def _peer(cache: Path) -> list[str] | None:
    """mcp-shell-server (PyPI, pinned in bench/peers.py, its own venv), or None with why."""
    from peers import PeerUnavailableError, ensure_mcp_shell_server

    try:
        return [str(ensure_mcp_shell_server(cache))]
    except PeerUnavailableError as exc:
        print(f"mcp-shell-server unavailable: {exc}", file=sys.stderr)
        return None


def _mcp_paths(
    env: dict[str, str],
    bare: Path,
    bridged: Path,
    only: set[str] | None,
    cold: Path | None,
    peer: list[str] | None,
) -> dict[str, Callable[[], float]]:
    paths: dict[str, Callable[[], float]] = {}
    if only is None or "mcp" in only:
        paths["mcp --embedded initialize"] = lambda: _mcp_initialize(env, bare, embedded=True)
        paths["mcp --embedded tools/list"] = lambda: _mcp_initialize(
            env, bare, embedded=True, until_tools=True
        )
    if only is None or "mcp" in only or "bridge" in only:
        paths["mcp (bridge) initialize"] = lambda: _mcp_initialize(env, bridged, embedded=False)
        paths["mcp (bridge) tools/list"] = lambda: _mcp_initialize(
            env, bridged, embedded=False, until_tools=True
        )
        if cold is not None:
            paths["mcp (bridge, cold: starts the host) tools/list"] = lambda: _cold_bridge(
                env, cold
            )
        if peer is not None:
            peer_env = dict(env, ALLOW_COMMANDS="echo,seq")
            paths["peer mcp-shell-server tools/list"] = lambda: _mcp_initialize(
                peer_env, bare, embedded=False, until_tools=True, argv=peer
            )
    return paths


def _verb_paths(
    sides: list[Side], only: set[str] | None, paths: dict[str, Callable[[], float]]
) -> None:
    """Every verb row, with no host and with one, for each side (a baseline's right after)."""
    for label, argv in _VERBS:
        if only is not None and label.split()[0] not in only:
            continue
        for where in ("no host", "host"):
            if label in _HOST_ONLY and where == "no host":
                continue
            for side in sides:
                root = side.bare if where == "no host" else side.hosted
                cmd = [_HABITAT, *argv, "--project", str(root)]
                reopen = [_HABITAT, "run", "true", "--tab", "gone", "--project", str(root)]

                def measure(
                    cmd: list[str] = cmd,
                    root: Path = root,
                    reopen: list[str] = reopen,
                    env: dict[str, str] = side.env,
                    closes: bool = argv[0] == "close",
                    starts: bool = argv[0] == "dashboard" and where == "no host",
                ) -> float:
                    if closes:
                        _quiet(reopen, env, root)
                    value = _timed_any(cmd, env, root)
                    if starts:
                        _stop(env, root)  # the next sample (and every other no-host row) finds none
                    return value

                paths[f"{label} ({where}){side.suffix}"] = measure


def _paths(
    sides: list[Side],
    bridged: Path,
    typed: Path,
    only: set[str] | None,
    cold: Path | None = None,
    peer: list[str] | None = None,
) -> dict[str, Callable[[], float]]:
    env, bare = sides[0].env, sides[0].bare
    paths: dict[str, Callable[[], float]] = {
        "python -c pass": lambda: _timed([sys.executable, "-c", "pass"], env, bare),
        "habitat --version": lambda: _timed([_HABITAT, "--version"], env, bare),
    }
    _verb_paths(sides, only, paths)
    if only is None or "terminal" in only:
        echo = [_HABITAT, "run", "echo hi", "--project", str(typed)]

        def first() -> float:
            _stop(env, typed)  # no host runs: the person's first command
            return _at_a_terminal(echo, env, typed)

        def right_after() -> float:
            # Typed at once: the host the first one started is still starting.
            return _at_a_terminal(echo, env, typed)

        def once_up() -> float:
            value = _at_a_terminal(echo, env, typed)
            _stop(env, typed)
            return value

        paths["run 'echo hi' (terminal, no host)"] = first
        paths["run 'echo hi' (terminal, right after)"] = right_after
        paths["run 'echo hi' (terminal, host up)"] = once_up
        paths["host start (to listening)"] = lambda: _host_start(env, typed)
    paths.update(_mcp_paths(env, bare, bridged, only, cold, peer))
    return paths


def _targets(medians: dict[str, float], bare: float) -> dict[str, tuple[str, bool]]:
    targets: dict[str, tuple[str, bool]] = {}

    def put(name: str, label: str, met: bool) -> None:
        if name in medians:
            targets[name] = (label, met)

    put("habitat --version", "≤ 3× python", medians.get("habitat --version", 0) <= 3 * bare)
    run = medians.get("run 'echo hi' (host)", 0)
    put("run 'echo hi' (host)", "≤ 100 ms, ≤ 4× python", run <= 100 and run <= 4 * bare)
    for name, value in medians.items():
        # Every command, with a host and without (issue 25: no command adds more than 150 ms).
        if name.endswith(("(host)", "(no host)", "host up)")) and name not in targets:
            put(name, "adds ≤ 150 ms", value - bare <= 150)
    one_shot = medians.get("run 'echo hi' (no host)", 0)
    first = medians.get("run 'echo hi' (terminal, no host)", 0)
    put(
        "run 'echo hi' (terminal, no host)",
        "≤ 1.1× the one-shot run",
        bool(one_shot) and first <= 1.1 * one_shot,
    )
    put("scene (no host)", "≤ 250 ms", medians.get("scene (no host)", 0) <= 250)
    # Issue 24: the target is on the first `tools/list` answer (the first usable moment);
    # the `initialize` rows keep issue 11's old target for comparison.
    put(
        "mcp --embedded initialize",
        "old: ≤ 500 ms",
        medians.get("mcp --embedded initialize", 0) <= 500,
    )
    put(
        "mcp (bridge) initialize", "old: ≤ 500 ms", medians.get("mcp (bridge) initialize", 0) <= 500
    )
    put("mcp --embedded tools/list", "≤ 500 ms", medians.get("mcp --embedded tools/list", 0) <= 500)
    put("mcp (bridge) tools/list", "≤ 500 ms", medians.get("mcp (bridge) tools/list", 0) <= 500)
    return targets


def _vs_baseline(medians: dict[str, float]) -> dict[str, float]:
    """Each row measured with `--baseline` too: its median over the baseline's."""
    return {
        name: value / medians[name + BASELINE]
        for name, value in medians.items()
        if medians.get(name + BASELINE)
    }


_TARGET_MS = {"≤ 500 ms": 500.0, "old: ≤ 500 ms": 500.0, "≤ 250 ms": 250.0}
"""The targets that are a fixed bound: their verdict comes from the median's interval."""


def _rows(
    samples: dict[str, list[float]],
    medians: dict[str, float],
    bare_ms: float,
    targets: dict[str, tuple[str, bool]],
    vs_base: dict[str, float],
) -> tuple[list[list[str]], dict[str, str]]:
    """The table's rows, and the verdicts of the fixed-bound targets."""
    rows = []
    verdicts: dict[str, str] = {}
    for name, values in samples.items():
        target, met = targets.get(name, ("", True))
        if target in _TARGET_MS:
            low, high = median_ci(values)
            verdicts[name] = verdict(values, _TARGET_MS[target])
            target = f"{target} (median 95 % CI {low:.0f}–{high:.0f}): {verdicts[name]}"
        rows.append(
            [
                name,
                f"{medians[name]:.0f}",
                f"{percentile(values, 0.9):.0f}",
                f"{min(values):.0f}",
                f"{medians[name] / bare_ms:.1f}×",
                f"{medians[name] - bare_ms:+.0f}",
                f"{vs_base[name]:.2f}×" if name in vs_base else "",
                target
                if name in verdicts
                else f"{target} {'met' if met else 'MISSED'}"
                if target
                else "",
            ]
        )
    return rows, verdicts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument(
        "--only",
        help="comma-separated verbs to measure (e.g. run,last,mcp; bridge: only the bridge "
        "to a running host); default all",
    )
    parser.add_argument(
        "--peer-cache",
        type=Path,
        default=Path(__file__).resolve().parents[2] / ".bench-cache",
        help="where bench/peers.py installs mcp-shell-server (the mcp rows' peer)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout's src folder (holding agent_habitat): every verb row is also "
        "measured with it, interleaved (rows '… [baseline]')",
    )
    parser.add_argument("--out", type=Path, help="also write the JSON here (docs/bench-data/)")
    args = parser.parse_args()
    start = started()
    only = set(args.only.split(",")) if args.only else None
    env = _env()
    sides = [Side(env, "")]
    if args.baseline is not None:
        sides.append(Side(_baseline_env(args.baseline, env), BASELINE))
    bridged, typed, cold = (
        Path(_made(f"bench-cli-{name}-")) for name in ("bridged", "typed", "cold")
    )
    mcp = only is None or "mcp" in only
    peer = _peer(args.peer_cache) if mcp else None
    for folder in (bridged, typed, cold):
        _quiet([_HABITAT, "run", "echo ready", "--project", str(folder)], env, folder)
    for side in sides:
        side.prepare()
    paths = _paths(sides, bridged, typed, only, cold if mcp else None, peer)
    samples: dict[str, list[float]] = {name: [] for name in paths}
    rounds = 0
    try:
        try:
            for n in range(args.warmup + args.iterations):
                for name, measure in paths.items():
                    value = measure()
                    if n >= args.warmup:
                        samples[name].append(value)
                rounds = max(0, n + 1 - args.warmup)
                print(f"round {n + 1}/{args.warmup + args.iterations} done", file=sys.stderr)
        except KeyboardInterrupt:
            # On a machine too loaded to finish: the whole rounds done so far, said as such.
            print(f"interrupted: reporting the {rounds} whole rounds done", file=sys.stderr)
            for values in samples.values():
                del values[rounds:]
            if not rounds:
                raise
    finally:
        for side in sides:
            side.close()
        for folder in (bridged, typed, cold):
            _stop(env, folder)
        for made in _MADE:
            shutil.rmtree(made, ignore_errors=True)
    load_after = [round(x, 2) for x in os.getloadavg()]
    bare_ms = statistics.median(samples["python -c pass"])
    medians = {name: statistics.median(values) for name, values in samples.items()}
    targets = _targets(medians, bare_ms)
    vs_base = _vs_baseline(medians)
    rows, verdicts = _rows(samples, medians, bare_ms, targets, vs_base)
    print_table(
        f"CLI latency, {rounds} interleaved fresh processes each (ms)",
        ["path", "median", "p90", "min", "vs python", "added", "vs base", "target"],
        rows,
    )
    path = write_json(
        "cli_latency",
        {
            **run_meta(start),
            "command": " ".join(sys.argv[1:]),
            "iterations": rounds,
            "python_ms": round(bare_ms, 1),
            "load_average": load_after,
            "host_start_cpu_ms": [
                round(x, 1) for x in HOST_CPU_MS[args.warmup : args.warmup + rounds]
            ],
            "host_start_runqueue_ms": [
                round(x, 1) for x in HOST_RUNQUEUE_MS[args.warmup : args.warmup + rounds]
            ],
            "results": {
                name: {
                    "median_ms": round(medians[name], 1),
                    "p90_ms": round(percentile(values, 0.9), 1),
                    "min_ms": round(min(values), 1),
                    "vs_python": round(medians[name] / bare_ms, 2),
                    **({"vs_baseline": round(vs_base[name], 2)} if name in vs_base else {}),
                    "ci_ms": [round(x, 1) for x in median_ci(values)],
                    "samples_ms": [round(x, 1) for x in values],
                }
                for name, values in samples.items()
            },
            "targets": {
                name: {"target": t, "met": met, "verdict": verdicts.get(name)}
                for name, (t, met) in targets.items()
            },
        },
        args.out,
    )
    if HOST_CPU_MS:
        cpu = statistics.median(HOST_CPU_MS[args.warmup : args.warmup + rounds])
        queued = statistics.median(HOST_RUNQUEUE_MS[args.warmup : args.warmup + rounds])
        wall = medians["host start (to listening)"]
        print(
            f"host start: {wall:.0f} ms wall = {cpu:.0f} ms on a CPU + {queued:.0f} ms runnable "
            f"but waiting for one + {wall - cpu - queued:.0f} ms blocked (medians); wall/CPU "
            f"{wall / cpu:.1f}; load {start['load_before']} before, {load_after} after, "
            f"{os.cpu_count()} CPUs"
        )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
