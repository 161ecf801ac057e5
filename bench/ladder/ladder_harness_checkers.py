"""The warm type checkers of `compile.project` (issue 22) next to each tool's own CLI, on a
real project: packaging 26.4 (pinned, ladder_harness_projects.py), configured in turn for
basedpyright, ty and pyrefly.

For each tool a copy of packaging's git tree gets `[tool.<tool>]` in its pyproject.toml
(committed, so HEAD configures it) and is opened the way the host opens it (`Habitat.open`:
verify runner, watcher, the warm-up that starts the language server). Each round edits one
module (an annotated assignment, a new finding on odd rounds: `int` given a `str`), verifies
`compile.project` alone through the runner, then runs the tool's own CLI cold on the same
targets in the same tree — the peer — and compares the two sets of findings (file, line,
column, code, severity, message): the parity check. pyrefly runs cold in both (its
language server is not used; typecheck.py says why), so its row measures only our overhead.

    .venv/bin/python bench/ladder/ladder_harness_checkers.py [--rounds 10] [--cache DIR]
        [--tools basedpyright,ty,pyrefly]
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

from _report import print_table, write_json
from agent_habitat.habitat import Habitat
from agent_habitat.verify import LadderRequest
from agent_habitat.verify.models import Diagnostic, RungResult
from agent_habitat.verify.parsers import parse_pyrefly, parse_pyright, parse_ty
from agent_habitat.workspace import Workspace

BIN = Path(sys.executable).parent
TOOLS = ("basedpyright", "ty", "pyrefly")


def _tree(cache: Path, source: Path, tool: str) -> Path:
    """packaging's tree configured for `tool`, committed (built once)."""
    root = cache / "work" / f"packaging-{tool}"
    if (root / ".git").is_dir():
        git(root, "checkout", "-q", "--", ".")
        return root
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp, ignore=shutil.ignore_patterns(".mypy_cache", "__pycache__"))
    table = 'include = ["src"]\n' if tool == "basedpyright" else ""
    with open(tmp / "pyproject.toml", "a", encoding="utf-8") as f:
        f.write(f"\n[tool.{tool}]\n{table}")
    git(tmp, "add", "-A")
    git(tmp, "commit", "-qm", f"configure {tool}")
    tmp.rename(root)
    return root


def _cli(tool: str, python: str, targets: list[str]) -> list[str]:
    exe = str(BIN / tool)
    if tool == "basedpyright":
        return [exe, "--outputjson", "--pythonpath", python, *targets]
    if tool == "ty":
        flags = ["--output-format", "concise", "--no-progress", "--color=never"]
        return [exe, "check", *flags, "--python", python, *targets]
    flags = ["--output-format", "json", "--color", "never"]
    return [exe, "check", *flags, "--python-interpreter-path", python, *targets]


def _parse(tool: str, text: str, root: Path) -> list[Diagnostic]:
    if tool == "basedpyright":
        return parse_pyright(text, root, source=tool)
    return parse_ty(text, root) if tool == "ty" else parse_pyrefly(text, root)


def _targets(rung: RungResult) -> list[str]:
    return [a for a in rung.command if a.endswith((".py", ".pyi")) and not a.startswith("/")]


def _keys(diags: list[Diagnostic]) -> set[tuple[Any, ...]]:
    return {(d.file, d.line, d.col, d.code, d.severity, d.message) for d in diags}


async def bench_tool(root: Path, tool: str, python: str, rounds: int) -> dict[str, Any]:
    workspace = Workspace.for_project(root)
    rows: list[dict[str, Any]] = []
    async with Habitat.open(workspace, project=root) as habitat:
        warm, runner = habitat.verifier.warmup, habitat.verify
        assert warm is not None
        assert runner is not None
        t0 = time.perf_counter()
        await warm.wait()
        item = warm.items.get("type_daemon")
        print(f"[{tool}] warm-up {time.perf_counter() - t0:.1f} s: {item}", file=sys.stderr)
        modules = sorted(
            p.relative_to(root).as_posix()
            for p in (root / "src" / "packaging").rglob("*.py")
            if len(p.read_bytes().splitlines()) > 40
        )
        for i in range(rounds):
            rel = modules[i % len(modules)]
            git(root, "checkout", "-q", "--", ".")
            value = '"text"' if i % 2 else str(i)  # odd rounds: a new finding
            with open(root / rel, "a", encoding="utf-8") as f:
                f.write(f"\n_habitat_bench_{i}: int = {value}\n")
            t1 = time.perf_counter()
            ticket = await runner.request(LadderRequest(rungs=["compile.project"]), wait=True)
            wall = time.perf_counter() - t1
            assert ticket.result is not None, ticket
            assert ticket.result.result is not None, ticket
            (rung,) = ticket.result.result.rungs
            targets = _targets(rung)
            t2 = time.perf_counter()
            done = subprocess.run(
                _cli(tool, python, targets), cwd=root, capture_output=True, text=True, check=False
            )
            cli = time.perf_counter() - t2
            cold = _keys(_parse(tool, done.stdout, root))
            ours = _keys(rung.diagnostics)
            rows.append(
                {
                    "file": rel,
                    "state": rung.state,
                    "new": rung.new_findings,
                    "wall_s": wall,
                    "rung_s": rung.duration_s,
                    "cli_s": cli,
                    "targets": len(targets),
                    "identical": ours == cold,
                    "only_ours": sorted(map(str, ours - cold))[:5],
                    "only_cli": sorted(map(str, cold - ours))[:5],
                    "warm": any("warm language server" in n for n in rung.notes),
                    "notes": rung.notes,
                }
            )
        git(root, "checkout", "-q", "--", ".")
    return {"tool": tool, "rounds": rows, "warmup": str(item)}


def _p50(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(float(r[key]) for r in rows) * 1000 if rows else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--python", default=shutil.which("python3.12") or sys.executable)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--cache", type=Path, default=cache / "agent-habitat/bench/ladder")
    parser.add_argument("--tools", default=",".join(TOOLS))
    args = parser.parse_args()
    tools = [t for t in args.tools.split(",") if t]
    if unknown := [t for t in tools if t not in TOOLS]:
        raise SystemExit(f"--tools: unknown {unknown}; choose from {', '.join(TOOLS)}")
    if missing := [t for t in tools if not (BIN / t).is_file()]:
        raise SystemExit(f"not installed next to this interpreter: {missing} (pip install …)")
    os.environ["HABITAT_COALESCE_SECONDS"] = "0"
    os.environ["HABITAT_LADDER_WARMUP"] = "true"
    os.environ["HABITAT_HOME"] = tempfile.mkdtemp(prefix="ladder-checkers-")
    source, venv_python = prepare(PROJECTS["packaging"], args.cache.resolve(), args.python)
    os.environ["HABITAT_LADDER_PYTHON"] = str(venv_python)
    results = []
    for tool in tools:
        root = _tree(args.cache.resolve(), source, tool)
        results.append(anyio.run(bench_tool, root, tool, str(venv_python), args.rounds))
    table = []
    for res in results:
        rows = res["rounds"]
        same = sum(r["identical"] for r in rows)
        warm = sum(r["warm"] for r in rows)
        wall, cli = _p50(rows, "wall_s"), _p50(rows, "cli_s")
        table.append(
            [
                res["tool"],
                f"{wall:.0f}",
                f"{cli:.0f}",
                f"{wall / cli:.2f}" if cli else "—",
                f"{warm}/{len(rows)}",
                f"{same}/{len(rows)}",
                "✓" if rows and same == len(rows) else "✗",
            ]
        )
    print_table(
        "compile.project through a warm server vs the tool's own CLI (packaging 26.4)",
        ["tool", "ours p50 ms", "CLI p50 ms", "ours/CLI", "warm", "same findings", "parity"],
        table,
    )
    path = write_json("ladder_harness_checkers", {"results": results})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
