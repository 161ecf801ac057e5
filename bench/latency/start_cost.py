"""What our processes cost to start: CPU seconds (whole process tree, in a cpuacct cgroup of
its own) and wall time of each, next to `python -c pass`, with and without coverage's
measurement of the child (as the suite's `--cov` children are measured).

    .venv/bin/python bench/latency/start_cost.py [--rounds 10] [--baseline /tmp/old/src]
        [--only host,host_mcp,embedded,cli,import_mcp] [--no-coverage] [--out FILE.json]

The cases, each a fresh process (a person's or an agent's first call, no warm state):
* `host`: `python -m agent_habitat.host --project P` until its record is in `host.lock`
  (listening), then SIGTERM until it exits: the start and stop every test that starts a host
  pays (the warm-up off, as the tests run it: `HABITAT_LADDER_WARMUP=false`);
* `host_mcp`: the same host, and the bridge (`habitat mcp --project P`) to its first
  `tools/list` answer, then the host stopped: the host's MCP side built on first request, and
  the bridge's own start (its own row, `bridge`);
* `embedded`: `habitat mcp --embedded --project P` to its first `tools/list` answer, stdin
  closed, until it exits;
* `cli`: `habitat project --project P` with no host (the CLI's full path: the habitat built
  in the process);
* `cli_quiet`: `habitat project --project P` with no host once the workspace's state exists
  (a `habitat history` before, not measured): the quick path (`cli.project_quiet`) where it
  answers, else the full path;
* `cli_trusted`: `habitat trust --project P` of a project trusted before (not measured);
* `cli_grant`: `habitat trust --project P` of a project not trusted yet, its state made
  before (a `habitat history`, not measured): the first grant;
* `import_mcp`: `python -c "import mcp.server"` (never measured by coverage: a `-c` of the
  suite's harness is not).

`--baseline SRC` runs every case a second time, right after it in the same round, with
another checkout's `agent_habitat` first on PYTHONPATH (`git archive REV src | tar -x -C
/tmp/old`); this checkout's src is put first likewise. Rounds interleave every case and
variant, so the machine's load falls on all alike. With coverage: COVERAGE_PROCESS_START
names this repository's pyproject.toml and the dev venv's `.pth` hooks start coverage as in
the suite (data files into a temporary folder, removed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _report import REPO, print_table, run_meta, started, write_json

_CGROUPS = Path("/sys/fs/cgroup/cpuacct")
_PYTHON = sys.executable
_HABITAT = str(Path(sys.executable).with_name("habitat"))
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "start-cost", "version": "0"},
    },
}
_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
_TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
CASES = (
    "pass",
    "host",
    "host_mcp",
    "embedded",
    "cli",
    "import_mcp",
    "cli_quiet",
    "cli_trusted",
    "cli_grant",
)


class Group:
    """A cpuacct cgroup: every process started into it, and their children, counted."""

    def __init__(self, root: Path, name: str) -> None:
        self.path = root / name
        self.path.mkdir()

    def enter(self) -> None:  # in the child, before exec
        (self.path / "tasks").write_text(str(os.getpid()))

    def seconds(self) -> float:
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def remove(self) -> None:
        # A sample cut short (an error, Ctrl-C) leaves no process of its own behind.
        for pid in (self.path / "tasks").read_text().split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.path.rmdir()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)


class Runner:
    def __init__(self, work: Path, src: Path, coverage: bool, root: Path) -> None:
        self.work = work
        self.src = src
        self.coverage = coverage
        self.root = root
        self.count = 0

    def env(self, home: Path) -> dict[str, str]:
        env = dict(os.environ)
        for name in (
            "COVERAGE_PROCESS_START",
            "COVERAGE_PROCESS_CONFIG",
            "PYTHONDONTWRITEBYTECODE",
        ):
            env.pop(name, None)
        env.update(
            HABITAT_HOME=str(home),
            HABITAT_LADDER_WARMUP="false",
            HABITAT_LADDER_FETCH_CHECKERS="false",
            PYTHONPATH=str(self.src),
        )
        if self.coverage:
            env["COVERAGE_PROCESS_START"] = str(REPO / "pyproject.toml")
            env["COVERAGE_FILE"] = str(self.work / "coverage" / ".coverage")
        return env

    @contextlib.contextmanager
    def group(self) -> Iterator[Group]:
        self.count += 1
        group = Group(self.root, f"g{self.count}")
        try:
            yield group
        finally:
            group.remove()

    def project(self) -> tuple[Path, Path]:
        place = Path(tempfile.mkdtemp(prefix="c", dir=self.work))
        project = place / "p"
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        (project / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
        return place / "h", project

    def spawn(
        self, group: Group, argv: list[str], env: dict[str, str], **kw: object
    ) -> subprocess.Popen[bytes]:
        return subprocess.Popen(argv, env=env, preexec_fn=group.enter, **kw)  # type: ignore[call-overload,no-any-return]


def _wait_record(home: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for lock in home.glob("*/*/host.lock"):
            with contextlib.suppress(OSError, ValueError):
                if json.loads(lock.read_text() or "{}").get("pid") == proc.pid:
                    return
        if proc.poll() is not None:
            raise RuntimeError(f"the host exited with {proc.returncode}")
        time.sleep(0.01)
    raise RuntimeError("no host record in 120 s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)


def _tools_list(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(
        "".join(json.dumps(m) + "\n" for m in (_INITIALIZE, _INITIALIZED, _TOOLS_LIST)).encode()
    )
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the MCP server closed stdout before answering tools/list")
        reply = json.loads(line)
        if reply.get("id") == 2:
            if "result" not in reply:
                raise RuntimeError(f"not a result: {reply}")
            break
    proc.stdin.close()
    proc.wait(timeout=120)


def measure(r: Runner, case: str) -> dict[str, float]:
    """{row: CPU s} and walls for one sample of `case`."""
    home, project = r.project()
    env = r.env(home)
    out: dict[str, float] = {}
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
    if case in ("cli_quiet", "cli_trusted", "cli_grant"):  # the state made first, not measured
        before = "trust" if case == "cli_trusted" else "history"
        argv = [_HABITAT, before, "--project", str(project)]
        # `history` of a tab not open yet is refused (exit 1), the state made all the same.
        quiet = subprocess.DEVNULL
        subprocess.run(argv, env=env, check=case == "cli_trusted", stdout=quiet, stderr=quiet)
    with r.group() as group:
        t0 = time.perf_counter()
        if case == "pass":
            r.spawn(group, [_PYTHON, "-c", "pass"], env).wait()
        elif case == "import_mcp":
            r.spawn(group, [_PYTHON, "-c", "import mcp.server"], env).wait()
        elif case == "cli":
            argv = [_HABITAT, "project", "--project", str(project)]
            r.spawn(group, argv, env, stdout=subprocess.DEVNULL).wait()
        elif case in ("cli_quiet", "cli_trusted", "cli_grant"):
            verb = "project" if case == "cli_quiet" else "trust"
            argv = [_HABITAT, verb, "--project", str(project)]
            r.spawn(group, argv, env, stdout=subprocess.DEVNULL).wait()
        elif case == "embedded":
            argv = [_HABITAT, "mcp", "--embedded", "--project", str(project)]
            _tools_list(r.spawn(group, argv, env, **pipes))
        elif case in ("host", "host_mcp"):
            argv = [_PYTHON, "-m", "agent_habitat.host", "--project", str(project)]
            host = r.spawn(group, argv, env, stderr=subprocess.DEVNULL)
            _wait_record(home, host)
            if case == "host_mcp":
                with r.group() as bridge_group:
                    b0 = time.perf_counter()
                    argv = [_HABITAT, "mcp", "--project", str(project)]
                    _tools_list(r.spawn(bridge_group, argv, env, **pipes))
                    out["bridge wall"] = time.perf_counter() - b0
                    out["bridge"] = bridge_group.seconds()
            _stop(host)
        out[f"{case} wall"] = time.perf_counter() - t0
        out[case] = group.seconds()
    shutil.rmtree(home.parent, ignore_errors=True)
    return out


def _table(
    samples: dict[str, dict[str, list[float]]], names: list[str], rounds: int
) -> dict[str, dict[str, float]]:
    """Print each row's medians and this checkout's ratio to the baseline's; the medians."""
    rows = []
    medians: dict[str, dict[str, float]] = {}
    for row, by in samples.items():
        medians[row] = {name: statistics.median(values) for name, values in by.items()}
        cells = [row, *(f"{medians[row][n]:.3f}" if n in medians[row] else "" for n in names)]
        for name in names:
            base = name.replace("this", "baseline")
            if name.startswith("this") and base in medians[row]:
                cells.append(f"{medians[row][name] / medians[row][base]:.2f}×")
        rows.append(cells)
    ratios = [
        f"{n} / base"
        for n in names
        if n.startswith("this") and n.replace("this", "baseline") in names
    ]
    title = f"start cost (CPU s, wall s), median of {rounds}, load {os.getloadavg()[0]:.1f}"
    print_table(title, ["row", *names, *ratios], rows)
    return medians


def _variants(baseline: Path | None, plain: bool, coverage: bool) -> list[tuple[str, Path, bool]]:
    sources = [("this", REPO / "src")]
    if baseline:
        subprocess.run([_PYTHON, "-m", "compileall", "-q", str(baseline)], check=True)
        sources.append(("baseline", baseline.resolve()))
    out = []
    for name, src in sources:
        if plain:
            out.append((name, src, False))
        if coverage:
            out.append((f"{name} +cov", src, True))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--only", default=",".join(CASES[1:]))
    parser.add_argument("--no-coverage", action="store_true")
    parser.add_argument("--coverage-only", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    cases = ["pass", *(c for c in args.only.split(",") if c and c != "pass")]
    for case in cases:
        if case not in CASES:
            parser.error(f"--only: no case {case!r} (one of {', '.join(CASES)})")
    start = started()
    work = Path(tempfile.mkdtemp(prefix="start-cost-"))
    (work / "coverage").mkdir()
    root = _CGROUPS / f"start-cost-{os.getpid()}"
    root.mkdir()
    variants = _variants(args.baseline, not args.coverage_only, not args.no_coverage)
    samples: dict[str, dict[str, list[float]]] = {}
    try:
        for n in range(args.rounds):
            for case in cases:
                for name, src, cov in variants:
                    if case in ("pass", "import_mcp") and cov:
                        continue  # coverage never starts in a `-c` of the harness
                    runner = Runner(work, src, cov, root)
                    for row, value in measure(runner, case).items():
                        samples.setdefault(row, {}).setdefault(name, []).append(value)
            print(f"round {n + 1}/{args.rounds} done, load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        for group in root.iterdir() if root.exists() else ():
            if group.is_dir():
                with contextlib.suppress(OSError):
                    group.rmdir()
        with contextlib.suppress(OSError):
            root.rmdir()
    medians = _table(samples, [v[0] for v in variants], args.rounds)
    payload = {
        **run_meta(start),
        "rounds": args.rounds,
        "baseline": str(args.baseline) if args.baseline else None,
        "medians": medians,
        "samples": samples,
    }
    print(write_json("start_cost", payload, args.out))


if __name__ == "__main__":
    main()
