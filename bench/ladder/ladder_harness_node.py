"""The Node toolchain on real projects (issue 27): seeded single-line mutations of a
project's TypeScript sources, `habitat verify` against the project's own full suite.

Projects (public repositories brought here with the search tool's fetch, never committed):
`ms` (vercel/ms: jest + ts-jest, biome, tsc) and `defu` (unjs/defu: vitest, tsc). Each is
prepared once under --workdir: cloned from --source, its devDependencies cut to what its
tests and checks use, pnpm's files dropped for npm (no pnpm here), `npm install`. The
mutations (bench/ladder/ladder_harness_node_mutate.cjs, the project's own typescript scanning
and parsing each candidate): comparison and operator flips, off-by-one constants, boolean
swaps, removed statements, swapped returns.

For each mutation, on the clean tree: `habitat verify --policy standard --json` through a
warm host (`--via oneshot`: `--no-host`), then `--rung test.scoped` when the climb stopped
before it, then the full suite (`npm test`). A miss: the full suite failed and
neither the verdict nor `test.scoped` was red (`scoped_green_full_red` marks a suite red where
`test.scoped` was not, as when the suite's own lint fails a mutant its tests pass). A false
red: a rung was red with no new finding, or `test.scoped` was red while the full suite passed.

    .venv/bin/python bench/ladder/ladder_harness_node.py --source ms=/path/to/ms.git \
        --source defu=/path/to/defu.git [--projects ms,defu] [--mutations 10] [--seed 9]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report
from _report import print_table

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
HABITAT = REPO / ".venv" / "bin" / "habitat"
MUTATE = HERE / "ladder_harness_node_mutate.cjs"
DATA = REPO / "docs" / "bench-data"


@dataclass(frozen=True)
class Project:
    name: str
    sources: tuple[str, ...]
    keep: tuple[str, ...]
    """devDependencies its tests and checks use (the rest is release tooling)."""
    test_script: str
    runner: str


PROJECTS = {
    "ms": Project(
        "ms",
        ("src/index.ts",),
        (
            "@biomejs/biome",
            "@edge-runtime/jest-environment",
            "@jest/globals",
            "@types/node",
            "jest",
            "ts-jest",
            "typescript",
            "ts-node",
        ),
        "npm run test:nodejs && npm run test:edge",
        "jest",
    ),
    "defu": Project(
        "defu",
        ("src/defu.ts", "src/_utils.ts"),
        ("@types/node", "expect-type", "typescript", "vitest"),
        "vitest run",
        "vitest",
    ),
    # Held out (not used before 2026-12-06): eslint (eslint-config-unjs) and prettier in its
    # own test script (prettier left out: with the lock dropped, a newer prettier fails the
    # clean tree), vitest with --typecheck, seven source modules and eleven test files.
    "ufo": Project(
        "ufo",
        (
            "src/encoding.ts",
            "src/parse.ts",
            "src/query.ts",
            "src/url.ts",
            "src/utils.ts",
        ),
        (
            "@types/node",
            "eslint",
            "eslint-config-unjs",
            "jiti",
            "prettier",
            "typescript",
            "vitest",
        ),
        "eslint . && vitest run --typecheck",
        "vitest",
    ),
    # Held out (not used before 2026-12-06, v2.0.3 pinned): eslint 9 (eslint-config-unjs,
    # flat config), vitest, tsc; four source modules and two test files.
    "pathe": Project(
        "pathe",
        ("src/_path.ts", "src/utils.ts", "src/_internal.ts"),
        (
            "@types/node",
            "eslint",
            "eslint-config-unjs",
            "jiti",
            "typescript",
            "vitest",
            "zeptomatch",
        ),
        "eslint . && vitest run",
        "vitest",
    ),
    # Held out (not used before 2026-12-07): jest 30 + ts-jest, eslint 10 (typescript-eslint
    # and prettier through eslint-plugin-prettier, flat config), tsc 6 with `declaration`;
    # fifteen source modules and seven test files. Its own `test` script also lints, builds
    # and runs tsd on the built types, then jest with coverage thresholds: the build and tsd
    # are left out (a release check of dist/), and coverage, whose thresholds would call a
    # mutant that only lowers coverage a failure of the suite.
    "cron-parser": Project(
        "cron-parser",
        (
            "src/CronDate.ts",
            "src/CronExpression.ts",
            "src/CronExpressionParser.ts",
            "src/CronFieldCollection.ts",
            "src/CronFileParser.ts",
            "src/fields/CronField.ts",
            "src/fields/CronDayOfMonth.ts",
            "src/fields/CronDayOfWeek.ts",
            "src/fields/CronHour.ts",
            "src/fields/CronMonth.ts",
        ),
        (
            "@types/jest",
            "@types/luxon",
            "@types/node",
            "@typescript-eslint/eslint-plugin",
            "@typescript-eslint/parser",
            "cross-env",
            "eslint",
            "eslint-config-prettier",
            "eslint-plugin-prettier",
            "jest",
            "prettier",
            "sinon",
            "ts-jest",
            "typescript",
        ),
        "eslint . && cross-env TZ=UTC jest",
        "jest",
    ),
    # Held out (not used before 2026-12-07): vitest 4, eslint 9 (eslint-config-unjs), tsc 5.9;
    # seven source modules, four test files (each imports the package's index). Its own
    # `test` script is `pnpm lint && vitest run --coverage` (lint: eslint and prettier):
    # prettier and coverage left out, as for ufo and pathe.
    "knitwork": Project(
        "knitwork",
        ("src/esm.ts", "src/object.ts", "src/string.ts", "src/typescript.ts", "src/_utils.ts"),
        ("@types/node", "esbuild", "eslint", "eslint-config-unjs", "typescript", "vitest"),
        "eslint . && vitest run",
        "vitest",
    ),
    # Held out (not used before 2026-12-07 but in a new user's trial, v2.0.5 pinned by the
    # source given): vitest 3, eslint 9 (eslint-config-unjs), tsc 5; one source module, one
    # test file. Its own `test` script is `pnpm lint && vitest run --coverage` (lint: eslint
    # and prettier): prettier and coverage left out, as for knitwork.
    "destr": Project(
        "destr",
        ("src/index.ts",),
        ("eslint", "eslint-config-unjs", "typescript", "vitest"),
        "eslint . && vitest run",
        "vitest",
    ),
    # Held out (not used before 2026-12-07, session 8; HEAD f89ede8, 3.1.1 and two dependency
    # updates): vitest 4, tsc 6 (skipLibCheck), oxlint and oxfmt (not installed: no linter
    # the habitat runs); five source modules, four test files. Its own `test` script is
    # `pnpm lint && vitest run --coverage`: the lint and coverage left out, as for knitwork.
    "cookie-es": Project(
        "cookie-es",
        (
            "src/cookie/parse.ts",
            "src/cookie/serialize.ts",
            "src/set-cookie/parse.ts",
            "src/set-cookie/split.ts",
            "src/_utils.ts",
        ),
        ("@types/node", "cookie", "mitata", "typescript", "vitest"),
        "vitest run",
        "vitest",
    ),
    # Held out (not used before 2026-12-07, session 9; supermacro/neverthrow 8.2.0 at HEAD
    # 5ef3a01 pinned by the source given): vitest 2, eslint 7 with a legacy `.eslintrc.js`
    # (typescript-eslint 4, prettier through eslint-plugin-prettier), TypeScript 4.7 with
    # skipLibCheck; four source modules, two test files. npm's own lock (dropped as the
    # others' are). Its own `test` script, whole: `vitest run`, then `tsc --noEmit` of the
    # tests' own tsconfig (the type tests); only the release tooling is left out.
    "neverthrow": Project(
        "neverthrow",
        ("src/result.ts", "src/result-async.ts", "src/_internals/utils.ts"),
        (
            "@types/node",
            "@typescript-eslint/eslint-plugin",
            "@typescript-eslint/parser",
            "eslint",
            "eslint-config-prettier",
            "eslint-plugin-prettier",
            "prettier",
            "testdouble",
            "ts-toolbelt",
            "typescript",
            "vitest",
        ),
        "vitest run && npm run test-types",
        "vitest",
    ),
}


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=1200, check=False
    )
    return time.perf_counter() - t0, proc.returncode, proc.stdout + proc.stderr


def _git(root: Path, *args: str) -> None:
    argv = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", *args]
    subprocess.run(argv, cwd=root, check=True, capture_output=True)


def prepare(project: Project, work: Path, source: str | None) -> Path:
    root = work / project.name
    if (root / "node_modules").is_dir():
        return root
    if source is None:
        sys.exit(f"{project.name}: not prepared under {work}; give --source {project.name}=REPO")
    _git(work, "clone", "-q", source, project.name)
    package = json.loads((root / "package.json").read_text(encoding="utf-8"))
    package["devDependencies"] = {
        k: v for k, v in package.get("devDependencies", {}).items() if k in project.keep
    }
    if "ts-node" in project.keep:
        package["devDependencies"]["ts-node"] = "^10"  # jest reads jest.config.ts with it
    package["scripts"]["test"] = project.test_script
    for key in ("packageManager",):
        package.pop(key, None)
    package["scripts"].pop("prepare", None)
    (root / "package.json").write_text(json.dumps(package, indent=2) + "\n", encoding="utf-8")
    for name in ("pnpm-lock.yaml", "pnpm-workspace.yaml"):
        if (root / name).exists():
            _git(root, "rm", "-q", name)
    _git(root, "commit", "-qam", "bench: the devDependencies the tests use, npm for pnpm")
    wall, code, text = _run(
        ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock"],
        root,
    )
    if code != 0:
        sys.exit(f"{project.name}: npm install failed: {text[-1000:]}")
    print(f"[{project.name}] installed in {wall:.0f} s", file=sys.stderr)
    return root


def mutations(root: Path, project: Project, count: int, seed: int) -> list[dict[str, Any]]:
    _, code, text = _run(["node", str(MUTATE), str(root), *project.sources], root)
    if code != 0:
        sys.exit(f"{project.name}: mutation scan failed: {text[-500:]}")
    every: list[dict[str, Any]] = json.loads(text)
    return random.Random(seed).sample(every, min(count, len(every)))


def _apply(root: Path, mutation: dict[str, Any]) -> None:
    path = root / mutation["file"]
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[mutation["line"] - 1] == mutation["before"], mutation
    lines[mutation["line"] - 1] = mutation["after"]
    path.write_text("\n".join(lines), encoding="utf-8")


def _tests_run(note_text: str) -> int | None:
    m = re.search(r"(\d+) test\(s\) ran", note_text)
    return int(m.group(1)) if m else None


class Bench:
    def __init__(self, root: Path, home: Path, oneshot: bool, src: str | None = None) -> None:
        self.root, self.oneshot = root, oneshot
        self.env = {**os.environ, "HABITAT_HOME": str(home)}
        if src:  # another habitat's code (`--compare`): its `src` first on the path
            self.env["PYTHONPATH"] = src

    def verify(self, *extra: str) -> tuple[float, dict[str, Any]]:
        via = ["--no-host"] if self.oneshot else []
        argv = [str(HABITAT), "verify", "--json", *via, *extra]
        wall, _, text = _run(argv, self.root, self.env)
        start = text.find("{")
        try:
            return wall, json.loads(text[start:])
        except ValueError:
            return wall, {"state": "error", "rungs": [], "error": text[-500:]}

    def host(self, action: str) -> None:
        _run([str(HABITAT), "host", action, "--project", str(self.root)], self.root, self.env)

    def full(self) -> tuple[float, int, int]:
        """(wall, exit code, tests run) of `npm test`."""
        wall, code, text = _run(["npm", "test"], self.root, {**os.environ, "FORCE_COLOR": "0"})
        text = re.sub(r"\x1b\[[0-9;]*m", "", text)
        runs = [
            int(n)
            for n in re.findall(r"Tests:?\s+(?:\d+ failed, )?(?:\d+ passed, )?(\d+) total", text)
        ]
        runs += [
            int(n) for n in re.findall(r"Tests\s+(?:\d+ failed \| )?\d+ passed \((\d+)\)", text)
        ]
        return wall, code, sum(runs)


def _rung(result: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((r for r in result.get("rungs", []) if r["rung"] == name), None)


def measure(
    bench: Bench, mutation: dict[str, Any], full: tuple[float, int] | None = None
) -> dict[str, Any]:
    """One mutation's verify (and `--rung test.scoped` when the climb stopped before it),
    then the full suite unless `full` gives its (wall, exit code) from another copy's run."""
    _apply(bench.root, mutation)
    try:
        wall, result = bench.verify("--policy", "standard")
        scoped = _rung(result, "test.scoped")
        scoped_wall = 0.0
        if scoped is None or (scoped.get("reason") or "").startswith("not reached"):
            scoped_wall, again = bench.verify("--rung", "test.scoped")
            scoped = _rung(again, "test.scoped")
        full_wall, full_code = full if full is not None else bench.full()[:2]
    finally:
        _git(bench.root, "checkout", "-q", "--", mutation["file"])
    scoped = scoped or {"state": "missing", "notes": [], "diagnostics": []}
    full_red = full_code != 0
    false_red = any(
        r["state"] == "red" and r.get("new_findings", 0) == 0 and r["rung"] != "test.scoped"
        for r in result.get("rungs", [])
    ) or (scoped["state"] == "red" and not full_red)
    return {
        **mutation,
        "ladder": result.get("state"),
        "rungs": {r["rung"]: r["state"] for r in result.get("rungs", [])},
        "rung_s": {r["rung"]: r.get("duration_s") for r in result.get("rungs", [])},
        "tools": {r["rung"]: r.get("tool") for r in result.get("rungs", [])},
        "scoped": scoped["state"],
        "scoped_tests": _tests_run(" ".join(scoped.get("notes", []))),
        "scoped_command": scoped.get("command_line", ""),
        "full_red": full_red,
        # A miss: the suite failed and the verdict did not (a suite that lints first fails on
        # a lint finding its tests pass; the ladder's lint rung says the same).
        "miss": full_red and scoped["state"] != "red" and result.get("state") != "red",
        "scoped_green_full_red": full_red and scoped["state"] != "red",
        "false_red": false_red,
        "verify_wall_s": round(wall, 2),
        "scoped_wall_s": round(scoped_wall, 2),
        "full_wall_s": round(full_wall, 2),
    }


def _summary(
    project: Project, root: Path, rows: list[dict[str, Any]], base: tuple[float, int]
) -> dict[str, Any]:
    version = json.loads((root / "package.json").read_text(encoding="utf-8"))["version"]
    head = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD~1"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    verify = [r["verify_wall_s"] for r in rows[1:]] or [r["verify_wall_s"] for r in rows]
    scoped_tests = [r["scoped_tests"] for r in rows if r["scoped_tests"] is not None]
    return {
        "project": project.name,
        "version": version,
        "commit": head,
        "runner": project.runner,
        "mutations": len(rows),
        "caught_by_full": sum(r["full_red"] for r in rows),
        "caught_by_ladder": sum(r["ladder"] == "red" for r in rows),
        "misses": sum(r["miss"] for r in rows),
        "false_reds": sum(r["false_red"] for r in rows),
        "full_tests": base[1],
        "scoped_tests_median": statistics.median(scoped_tests) if scoped_tests else None,
        "full_wall_s": round(base[0], 2),
        "verify_wall_median_s": round(statistics.median(verify), 2) if verify else None,
        # The first verify after the host started (and the warm-up with it), left out of the
        # median above: the same mutant's full suite beside it.
        "first_verify_wall_s": rows[0]["verify_wall_s"] if rows else None,
        "first_full_wall_s": rows[0]["full_wall_s"] if rows else None,
        "rows": rows,
    }


def _copy(root: Path, label: str) -> Path:
    """A copy of the prepared project for another habitat (`--compare`), made once."""
    other = root.with_name(f"{root.name}-{label}")
    if not other.is_dir():
        subprocess.run(["cp", "-a", str(root), str(other)], check=True)
    return other


def run_project(
    project: Project, root: Path, args: argparse.Namespace, habitats: dict[str, str | None]
) -> dict[str, dict[str, Any]]:
    """Each habitat's summary (`habitats`: label → its `src`, None for this checkout's).
    With more than one, every mutation is verified by each in turn, on its own copy of the
    project through its own host, the order rotated per mutation, and the full suite runs
    once per mutation, right after the first verify."""
    benches = {
        label: Bench(
            root if i == 0 else _copy(root, label),
            Path(args.workdir) / f"home-{project.name}-{args.via}-{label}",
            args.via == "oneshot",
            src,
        )
        for i, (label, src) in enumerate(habitats.items())
    }
    first = next(iter(benches.values()))
    base_wall, base_code, base_tests = first.full()
    if base_code != 0:
        sys.exit(f"{project.name}: the full suite fails on the clean tree")
    chosen = mutations(root, project, args.mutations, args.seed)
    rows: dict[str, list[dict[str, Any]]] = {label: [] for label in benches}
    load: list[float] = [os.getloadavg()[0]]
    started: list[Bench] = []
    try:
        for i, mutation in enumerate(chosen, 1):
            labels = list(benches)
            order = labels[i % len(labels) :] + labels[: i % len(labels)]
            full: tuple[float, int] | None = None
            for label in order:
                if args.via == "host" and benches[label] not in started:
                    # Each host starts right before its own first verify, as a user's does:
                    # started together, the second side's warm-up had the first side's
                    # verify and the suite's wall to itself before its first verify.
                    benches[label].host("start")
                    started.append(benches[label])
                row = measure(benches[label], mutation, full)
                row["load"] = round(os.getloadavg()[0], 1)
                load.append(row["load"])
                full = (row["full_wall_s"], 1 if row["full_red"] else 0)
                rows[label].append(row)
                print(
                    f"[{project.name}:{label}] {i}/{len(chosen)} {row['file']}:{row['line']} "
                    f"{row['kind']}: ladder {row['ladder']} scoped {row['scoped']} full "
                    f"{'red' if row['full_red'] else 'green'} verify {row['verify_wall_s']} s "
                    f"full {row['full_wall_s']} s load {row['load']}"
                    f"{' MISS' if row['miss'] else ''}{' FALSE-RED' if row['false_red'] else ''}",
                    file=sys.stderr,
                )
    finally:
        for bench in started:
            bench.host("stop")
    out = {}
    for label, bench in benches.items():
        summary = _summary(project, bench.root, rows[label], (base_wall, base_tests))
        summary["load"] = [min(load), max(load)]
        summary["habitat"] = label
        out[label] = summary
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", default="defu,ms")
    parser.add_argument("--mutations", type=int, default=10)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--workdir", default="/tmp/habitat-node-bench")
    parser.add_argument("--source", action="append", default=[], help="NAME=git repository")
    parser.add_argument("--via", choices=("host", "oneshot"), default="host")
    parser.add_argument("--out", default=None, help="JSON file (default docs/bench-data/…)")
    parser.add_argument(
        "--compare",
        action="append",
        default=[],
        help="LABEL=SRC: another habitat's code (a `git archive` of its src) verifying the "
        "same mutations, interleaved; each label's JSON beside --out (`-LABEL`); this "
        "checkout's is `after` unless a label begins with it",
    )
    args = parser.parse_args()
    given: dict[str, str | None] = dict(c.split("=", 1) for c in args.compare)
    habitats: dict[str, str | None] = given or {"": None}
    if given and not any(label.startswith("after") for label in given):
        habitats = {"after": None, **given}  # this checkout's, first
    sources = dict(s.split("=", 1) for s in args.source)
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    by_label: dict[str, list[dict[str, Any]]] = {label: [] for label in habitats}
    for name in args.projects.split(","):
        project = PROJECTS[name]
        root = prepare(project, Path(args.workdir), sources.get(name))
        for label, summary in run_project(project, root, args, habitats).items():
            by_label[label].append(summary)
    summaries = [s for label in habitats for s in by_label[label]]
    print_table(
        f"Node toolchain, {args.mutations} seeded mutations per project (via {args.via})",
        [
            "project",
            "runner",
            "caught full/ladder",
            "misses",
            "false reds",
            "scoped tests (median)",
            "full tests",
            "verify wall (median)",
            "full wall",
            "first verify / its suite",
        ],
        [
            [
                f"{s['project']} {s['version']}{' (' + s['habitat'] + ')' if s['habitat'] else ''}",
                s["runner"],
                f"{s['caught_by_full']}/{s['caught_by_ladder']} of {s['mutations']}",
                str(s["misses"]),
                str(s["false_reds"]),
                str(s["scoped_tests_median"]),
                str(s["full_tests"]),
                f"{s['verify_wall_median_s']} s",
                f"{s['full_wall_s']} s",
                f"{s['first_verify_wall_s']} / {s['first_full_wall_s']} s",
            ]
            for s in summaries
        ],
    )
    out = Path(args.out) if args.out else DATA / f"ladder_harness_node-{args.via}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    for label in habitats:
        path = out.with_name(f"{out.stem}-{label}{out.suffix}") if label else out
        payload = {
            "seed": args.seed,
            "via": args.via,
            "habitat": label or None,
            "compared": sorted(habitats) if len(habitats) > 1 else None,
            "command": " ".join(sys.argv),
            "projects": by_label[label],
        }
        path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
