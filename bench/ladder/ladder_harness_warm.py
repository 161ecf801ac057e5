"""The ladder in a warm server (issue 9): what a verify costs beyond its rungs, how fast
`diagnose.files` answers for one touched file in a ~100k-line project next to plain
`ruff check FILE`, and `compile.project` next to dmypy's own warm recheck on `packaging`
(the warm pyright-family, ty and pyrefly checks: ladder_harness_checkers.py).

Everything runs in one process the way the host runs it: `Habitat.open` on the project
(verify runner, file watcher, the warm-up on open), requests through `VerifyRunner.request
(wait=True)`. The coalesce window is set to 0 (`HABITAT_COALESCE_SECONDS=0`): it is a
deliberate wait for more requests (1.5 s by default), not overhead; the table says so.

* **combined** (~100k lines): the packages and tests of the harness's six real projects
  (ladder_harness_projects.py, prepared there first) copied into one git repository with
  no ruff configuration (the bug-finding default `F`, `E9` applies). Each round appends one
  line to a different module, verifies `diagnose.files` alone, then times `ruff check
  --select F,E9 FILE` (the same binary) on the same file.
* **packaging** (pinned 26.4): each round edits one line of a module and verifies
  `compile.project` alone; then edits the same module again and sends the rung's own `run`
  request to the same daemon from this process (`mypy.dmypy.client.request`), like for like
  (issue 24): no interpreter start, no client import, only the daemon's own work. Before
  each measured request an unmeasured one lets the daemon see the reset, so both measured
  requests find exactly one changed module. Our overhead is, per round, our wall minus the
  peer's; the target (≤ 50 ms) is on its median. At the end the rung's diagnostics are
  compared with a cold `mypy` run (fresh cache) of the same targets and flags.

    .venv/bin/python bench/ladder/ladder_harness_warm.py [--rounds 15] [--cache DIR]
        [--compile-only] [--out docs/bench-data/X.json]

The overhead's verdict comes from the 95 % interval of its median (`_report.verdict`):
'undecided' when the interval straddles 50 ms.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_harness_projects import PROJECTS, git, prepare

from _report import median_ci, print_table, run_meta, started, verdict, write_json
from agent_habitat.habitat import Habitat
from agent_habitat.trust import ProjectTrust
from agent_habitat.verify import LadderRequest, RungName, stop_type_daemon
from agent_habitat.verify.models import RungResult
from agent_habitat.verify.parsers import parse_mypy
from agent_habitat.workspace import Workspace

_COMBINED = ("attrs", "packaging", "click", "more-itertools", "toolz", "cachetools")


def _combined(cache: Path, python: str) -> Path:
    """One git repository holding the six projects' packages and tests (built once)."""
    root = cache / "work" / "combined"
    if (root / ".git").is_dir():
        return root
    tmp = root.with_name("combined.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for name in _COMBINED:
        project = PROJECTS[name]
        source, _ = prepare(project, cache, python)
        for folder in project.sources:
            shutil.copytree(source / folder, tmp / "src" / Path(folder).name)
        if (source / "tests").is_dir():
            shutil.copytree(source / "tests", tmp / "tests" / name.replace("-", "_"))
    (tmp / "pyproject.toml").write_text(
        '[project]\nname = "combined"\nversion = "0"\n\n'
        f"[tool.habitat.ladder]\npython = {sys.executable!r}\n",
        encoding="utf-8",
    )
    (tmp / ".gitignore").write_text("__pycache__/\n.mypy_cache/\n.ruff_cache/\n", "utf-8")
    git(tmp, "init", "-q")
    git(tmp, "add", "-A")
    git(tmp, "commit", "-qm", "combined")
    tmp.rename(root)
    return root


def _lines(root: Path) -> int:
    files = git(root, "ls-files", "*.py").stdout.split()
    return sum(len((root / f).read_bytes().splitlines()) for f in files)


def _modules(root: Path, under: str, count: int) -> list[str]:
    files = sorted(
        p.relative_to(root).as_posix()
        for p in (root / under).rglob("*.py")
        if "tests" not in p.parts and len(p.read_bytes().splitlines()) > 40
    )
    step = max(1, len(files) // count)
    return (files[::step] * count)[:count]


def _append(root: Path, rel: str, line: str) -> None:
    with open(root / rel, "a", encoding="utf-8") as f:
        f.write(f"\n{line}\n")


def _reset(root: Path) -> None:
    git(root, "checkout", "-q", "--", ".")


async def _one(habitat: Habitat, rung: RungName) -> tuple[float, RungResult, float]:
    """(wall s, the rung's result, wall beyond the rungs' own durations in s)."""
    runner = habitat.verify
    assert runner is not None
    t0 = time.perf_counter()
    ticket = await runner.request(LadderRequest(rungs=[rung]), wait=True)
    wall = time.perf_counter() - t0
    assert ticket.result is not None, ticket
    assert ticket.result.result is not None, ticket
    result = ticket.result.result
    (only,) = [r for r in result.rungs if r.rung == rung]
    return wall, only, wall - sum(r.duration_s for r in result.rungs)


async def _open_warm(root: Path) -> tuple[Habitat, Any]:
    ProjectTrust().grant_sync(root, "verb")  # the bench made it: the warm-up may run it
    workspace = Workspace.for_project(root)
    stack = Habitat.open(workspace, project=root)
    habitat = await stack.__aenter__()
    warm = habitat.verifier.warmup
    assert warm is not None
    t0 = time.perf_counter()
    await warm.wait()
    print(
        f"[{root.name}] warm-up {time.perf_counter() - t0:.1f} s: "
        + "; ".join(f"{k} {v.state} ({v.duration_s:.2f} s)" for k, v in warm.items.items()),
        file=sys.stderr,
        flush=True,
    )
    return habitat, stack


async def bench_diagnose(root: Path, rounds: int) -> dict[str, Any]:
    habitat, stack = await _open_warm(root)
    rows: list[dict[str, Any]] = []
    try:
        runner = habitat.verify
        assert runner is not None
        for i, rel in enumerate(_modules(root, "src", rounds)):
            _reset(root)
            _append(root, rel, f"_habitat_bench_{i} = {i}")
            wall, rung, overhead = await _one(habitat, "diagnose.files")
            ruff = rung.command[0]
            t0 = time.perf_counter()
            subprocess.run(
                [ruff, "check", "--select", "F,E9", rel], cwd=root, capture_output=True, check=False
            )
            plain = time.perf_counter() - t0
            rows.append(
                {
                    "file": rel,
                    "state": rung.state,
                    "wall_s": wall,
                    "rung_s": rung.duration_s,
                    "overhead_s": overhead,
                    "ruff_s": plain,
                    "baseline": rung.baseline,
                    "preexisting": rung.preexisting_findings,
                    "new": rung.new_findings,
                }
            )
    finally:
        _reset(root)
        await stack.__aexit__(None, None, None)
        await stop_type_daemon(root)
    return {"project": f"combined ({_lines(root):,} lines)", "rounds": rows}


async def bench_compile(root: Path, rounds: int) -> dict[str, Any]:
    habitat, stack = await _open_warm(root)
    rows: list[dict[str, Any]] = []
    parity: dict[str, Any] = {}
    command: list[str] | None = None
    try:
        for i, rel in enumerate(_modules(root, "src", rounds)):
            _reset(root)
            if command is not None:
                _dmypy_request(command)  # the daemon sees the reset, unmeasured
            _append(root, rel, f"_habitat_bench_{i}: int = {i}")
            wall, rung, overhead = await _one(habitat, "compile.project")
            command = rung.command
            _reset(root)
            _dmypy_request(command)
            _append(root, rel, f"_habitat_bench_again_{i}: int = {i}")
            direct, exit_code = _dmypy_request(command)
            rows.append(
                {
                    "file": rel,
                    "state": rung.state,
                    "wall_s": wall,
                    "rung_s": rung.duration_s,
                    "overhead_s": overhead,
                    "dmypy_s": direct,
                    "dmypy_exit": exit_code,
                    "ours_minus_dmypy_s": wall - direct,
                    "targets": len([a for a in rung.command if a.endswith((".py", ".pyi"))]),
                    "notes": rung.notes,
                }
            )
        # Parity: the rung on the last edit against a cold mypy (fresh cache), same argv.
        _reset(root)
        rel = rows[-1]["file"]
        _append(root, rel, "_habitat_parity: int = 0")
        _, rung, _ = await _one(habitat, "compile.project")
        parity = _parity(root, rung)
    finally:
        _reset(root)
        await stack.__aexit__(None, None, None)
        await stop_type_daemon(root)
    return {"project": f"packaging ({_lines(root):,} lines)", "rounds": rows, "parity": parity}


def _dmypy_request(argv: list[str]) -> tuple[float, int]:
    """The peer, like for like (issue 24): the same `run` request our rung sends, from this
    process over the daemon's socket (`mypy.dmypy.client.request`), so neither side pays an
    interpreter start or the client's import (0.14–0.21 s here). What it takes is the
    daemon's own work; our overhead is our wall minus it."""
    from mypy.dmypy import client  # imported before the clock starts
    from mypy.version import __version__

    status = argv[argv.index("--status-file") + 1]
    flags = argv[argv.index("--") + 1 :]
    # The relative targets are the daemon's to resolve (against its own folder, the root).
    t0 = time.perf_counter()
    response = client.request(
        status, "run", timeout=600, version=__version__, args=flags, export_types=False
    )
    took = time.perf_counter() - t0
    if "restart" in response or "error" in response:
        raise SystemExit(f"the dmypy peer request failed: {response}")
    return took, int(response.get("status", -1))


def _parity(root: Path, rung: RungResult) -> dict[str, Any]:
    argv = list(rung.command)
    cut = argv.index("--")
    flags_and_targets = argv[cut + 1 :]
    python = argv[0]
    with tempfile.TemporaryDirectory() as cache:
        cold = [python, "-m", "mypy", "--cache-dir", cache, *flags_and_targets]
        done = subprocess.run(cold, cwd=root, capture_output=True, text=True, check=False)

    def keys(diags: list[Any]) -> set[tuple[str, int, str, str]]:
        return {(d.file or "", d.line or 0, d.code or "", d.message) for d in diags}

    warm_keys = keys([d for d in rung.diagnostics if d.severity == "error"])
    cold_keys = keys([d for d in parse_mypy(done.stdout, root) if d.severity == "error"])
    return {
        "identical": warm_keys == cold_keys,
        "warm_errors": len(warm_keys),
        "cold_errors": len(cold_keys),
        "only_warm": sorted(warm_keys - cold_keys)[:10],
        "only_cold": sorted(cold_keys - warm_keys)[:10],
    }


def _p50(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rows) * 1000 if rows else 0.0


def _p90(rows: list[dict[str, Any]], key: str) -> float:
    if len(rows) < 2:
        return _p50(rows, key)
    return float(statistics.quantiles([float(r[key]) for r in rows], n=10)[-1]) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--python", default=shutil.which("python3.12") or sys.executable)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--cache", type=Path, default=cache / "agent-habitat/bench/ladder")
    parser.add_argument("--compile-only", action="store_true", help="leave diagnose.files out")
    parser.add_argument("--out", type=Path, help="also write the JSON here (docs/bench-data/)")
    args = parser.parse_args()
    start = started()
    os.environ["HABITAT_COALESCE_SECONDS"] = "0"
    os.environ["HABITAT_HOME"] = tempfile.mkdtemp(prefix="ladder-warm-")
    packaging, _ = prepare(PROJECTS["packaging"], args.cache.resolve(), args.python)
    diagnose: dict[str, Any] = {"project": "(left out: --compile-only)", "rounds": []}
    if not args.compile_only:
        combined = _combined(args.cache.resolve(), args.python)
        os.environ["HABITAT_LADDER_PYTHON"] = sys.executable
        diagnose = anyio.run(bench_diagnose, combined, args.rounds)
    venv = args.cache.resolve() / "venvs" / "packaging" / "bin" / "python"
    os.environ["HABITAT_LADDER_PYTHON"] = str(venv)
    compiled = anyio.run(bench_compile, packaging, args.rounds)
    d, c = diagnose["rounds"], compiled["rounds"]
    rows: list[list[str]] = []
    if d:
        rows.append(
            [
                f"diagnose.files end to end, {diagnose['project']}",
                f"{_p50(d, 'wall_s'):.0f}",
                f"ruff check FILE {_p50(d, 'ruff_s'):.0f}",
                "≤ 150",
                "✓" if _p50(d, "wall_s") <= 150 else "✗",
            ]
        )
    rows += [
        [
            f"compile.project end to end, {compiled['project']}",
            f"{_p50(c, 'wall_s'):.0f}",
            f"dmypy request in-process {_p50(c, 'dmypy_s'):.0f}",
            "",
            "",
        ],
        overhead_row(c),
        [
            "verify overhead beyond rungs (compile rounds" + (", diagnose rounds)" if d else ")"),
            f"{_p50(c, 'overhead_s'):.0f}" + (f" / {_p50(d, 'overhead_s'):.0f}" if d else ""),
            "",
            "≤ 150",
            "✓" if max(_p50(d, "overhead_s"), _p50(c, "overhead_s")) <= 150 else "✗",
        ],
        [
            "compile.project parity with a cold mypy",
            "identical" if compiled["parity"].get("identical") else "DIVERGED",
            f"{compiled['parity'].get('cold_errors')} errors cold",
            "identical",
            "✓" if compiled["parity"].get("identical") else "✗",
        ],
    ]
    print_table(
        "the ladder in a warm server (coalesce window 0)",
        ["measure", "p50 ms", "peer p50 ms", "target", "met"],
        rows,
    )
    path = write_json(
        "ladder_harness_warm",
        {**run_meta(start), "diagnose": diagnose, "compile": compiled},
        args.out,
    )
    print(f"wrote {path}")


def overhead_row(c: list[dict[str, Any]]) -> list[str]:
    """Our compile.project wall minus the daemon's own work, paired per round: p50 (its 95 %
    interval) / p90, against ≤ 50 ms (bench/tables.py makes the docs' row with this)."""
    if not c:
        return ["compile.project overhead", "no rounds", "", "p50 ≤ 50", ""]
    values = [r["ours_minus_dmypy_s"] * 1000 for r in c]
    low, high = median_ci(values)
    return [
        "compile.project overhead: ours − the daemon's own work (paired, p50 (95 % CI) / p90)",
        f"{_p50(c, 'ours_minus_dmypy_s'):.0f} ({low:.0f}–{high:.0f}) / "
        f"{_p90(c, 'ours_minus_dmypy_s'):.0f}",
        "",
        "p50 ≤ 50",
        verdict(values, 50.0),
    ]


if __name__ == "__main__":
    main()
