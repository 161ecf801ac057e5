"""The Go toolchain on real modules: seeded single-line mutations, `habitat verify`
through a warm host against the full suite and against `go test` of the touched package
alone (go's own affected-test mode) (issue 27).

For each project (a public repository's mirror, cloned to a temporary folder; glob ships
no go.mod, so one is made with `go mod init`, committed before any mutation; or a pinned
module from the Go module proxy, `go mod download -json MODULE@VERSION`, copied from the
module cache and committed as a fresh repository): trust it,
start its workspace host (`habitat host start`, as `habitat mcp` does), run the full suite
once (`go test -count=1 -json ./...`) for the baseline failures. Then for each mutation, on
a clean tree:

1. `habitat verify --policy standard --json` (through the host), then the same with
   `--no-host` (one-shot, a climb in the CLI's own process); when it stops before
   `test.scoped`, also `--rung test.scoped`, so every mutation measures the selection;
2. the full suite, `go test -count=1 -json ./...` (-count=1: no cached results from step 1);
3. `go test -count=1 -json` of the mutated file's package alone.

Steps 2 and 3 use their own GOCACHE (warmed on HEAD, like go's default cache the ladder
uses): otherwise whichever ran second would find the mutated package already compiled.

A miss: the full suite fails a test or package the baseline did not, and the ladder said
green (or nothing to verify); a climb that timed out on an endless loop is `error`, not a
miss. A false red: the ladder is red, the full suite found nothing new, and no red rung's
new finding is in the mutated file. Mutations: comparison flips, `+`/`-`, `&&`/`||`,
off-by-one integer constants, `true`/`false`, removed statements; on lines of non-test
`.go` files with no string literal or comment.

    .venv/bin/python bench/ladder/go_ladder_harness.py [--projects go-cmp,glob] [--mutations 10]
        [--seed 27]

Before and after in one run (`--habitat NAME=CLI`, twice or more): each CLI (a `habitat`
script, e.g. `PYTHONPATH=<that src> exec .venv/bin/python -m agent_habitat "$@"`) gets its
own HABITAT_HOME, its own host and its own GOCACHE warmed on HEAD (so neither finds the
other's compiled mutation); per mutation they verify in a rotating order, and the full suite
and the touched package run once, after them. `--out` then needs `{habitat}` in its name:
one file per CLI, in the format of a single run, sharing the reference walls.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from go_ladder_mutations import Mutation, apply, candidates

from _report import print_table

REPO = Path(__file__).resolve().parents[2]
HABITAT = Path(sys.executable).parent / "habitat"
DATA = REPO / "docs" / "bench-data" / "go_ladder_harness.json"


@dataclass(frozen=True)
class Project:
    name: str
    mirror: str
    """A git repository to clone (the `fetch` tool's mirror of the public repository)."""
    module: str | None = None
    """`go mod init` this when the repository has no go.mod."""
    proxy: str | None = None
    """MODULE@VERSION from the Go module proxy instead of a mirror."""


PROJECTS = {
    "go-cmp": Project("go-cmp", "/work/.mirror/google+go-cmp/repo"),
    "glob": Project("glob", "/work/.mirror/gobwas+glob/repo", module="github.com/gobwas/glob"),
    # Held out (issue 27): never used while the toolchain was built or tuned.
    "go-version": Project("go-version", "", proxy="github.com/hashicorp/go-version@v1.7.0"),
    # Added 2026-12-07 after the compile.project change, never used before it.
    "semver": Project("semver", "", proxy="github.com/Masterminds/semver/v3@v3.3.1"),
    # Added 2026-12-07 (session 6) for the vet-beside-tests change, never used before it.
    "uuid": Project("uuid", "", proxy="github.com/google/uuid@v1.6.0"),
    # Added 2026-12-07 (session 8) for the stopped rungs reaped after the verdict, never used
    # before that run.
    "golang-set": Project("golang-set", "", proxy="github.com/deckarep/golang-set/v2@v2.9.0"),
    # Added 2026-12-07 (session 9) for the rung reaped by its cgroup, never used before that
    # run; its module ships no go.mod (the proxy's is synthesized): `go mod init` makes one.
    "shellquote": Project(
        "shellquote",
        "",
        module="github.com/kballard/go-shellquote",
        proxy="github.com/kballard/go-shellquote@v0.0.0-20180428030007-95032a82bc51",
    ),
    # Added 2026-12-07 (session 10) for the failed builds compared with HEAD, never used
    # before that run: four packages (simplelru, internal, expirable, the root), so an edit
    # of simplelru tests its importers too.
    "golang-lru": Project("golang-lru", "", proxy="github.com/hashicorp/golang-lru/v2@v2.0.7"),
}


@dataclass(frozen=True)
class Side:
    """One habitat CLI under test, with its own environment (HABITAT_HOME, GOCACHE)."""

    name: str
    cli: Path
    env: dict[str, str]
    oneshot_env: dict[str, str]


_TIMEOUT = "120s"
"""A mutation can make a loop endless: the reference runs' go test -timeout, and the
ladder's (HABITAT_LADDER_TIMEOUT_S, which the host started here inherits)."""
os.environ.setdefault("HABITAT_LADDER_TIMEOUT_S", "120")
_REFERENCE_ENV: dict[str, str] = {}
"""The reference runs' environment: their own GOCACHE (see the module docstring)."""
_ONESHOT_ENV: dict[str, str] = {}
"""The one-shot climbs' own GOCACHE (warmed on HEAD too): the host's climb of the same edit
just before must not hand it compiled packages and cached test results."""


def _run(
    argv: list[str],
    cwd: Path,
    timeout: float = 900,
    *,
    reference: bool = False,
    extra: dict[str, str] | None = None,
) -> tuple[float, str, int]:
    started = time.monotonic()
    env = {**os.environ, **_REFERENCE_ENV} if reference else None
    if extra:
        env = {**os.environ, **extra}
    proc = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False, env=env
    )
    return time.monotonic() - started, proc.stdout + proc.stderr, proc.returncode


def _failures(text: str) -> set[str]:
    """Failed tests and packages of a `go test -json` stream."""
    out: set[str] = set()
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("Action") == "fail":
            out.add(f"{event.get('Package')}.{event.get('Test') or ''}")
    return out


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def _prepare(project: Project, work: Path) -> Path:
    root = work / project.name
    if project.proxy:
        got = subprocess.run(
            ["go", "mod", "download", "-json", project.proxy],
            cwd=work,
            check=True,
            capture_output=True,
            text=True,
        )
        shutil.copytree(json.loads(got.stdout)["Dir"], root)
        subprocess.run(["chmod", "-R", "u+w", str(root)], check=True)
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", f"{project.proxy} from the Go module proxy")
    else:
        subprocess.run(["git", "clone", "-q", project.mirror, str(root)], check=True)
    if project.module and not (root / "go.mod").exists():
        subprocess.run(
            ["go", "mod", "init", project.module], cwd=root, check=True, capture_output=True
        )
        _git(root, "add", "go.mod")
        _git(root, "commit", "-qm", "bench: go.mod")
    return root


def _verify(side: Side, root: Path, *extra: str) -> tuple[float, dict[str, Any]]:
    argv = [str(side.cli), "verify", "--json", "--project", str(root), *extra]
    wall, text, _ = _run(argv, root, extra=side.oneshot_env if "--no-host" in extra else side.env)
    start = text.find("{")
    return wall, json.loads(text[start:]) if start >= 0 else {"state": "unparsed", "rungs": []}


def _scoped_count(result: dict[str, Any]) -> int | None:
    for rung in result.get("rungs", []):
        if rung["rung"] == "test.scoped" and rung["state"] not in ("skipped",):
            return sum(1 for a in rung["command"] if not a.startswith("-")) - 2
        if rung["rung"] == "test.scoped" and "no Go package with tests" in (
            rung.get("reason") or ""
        ):
            return 0
    return None


def _package_of(root: Path, rel: str) -> str:
    parent = Path(rel).parent.as_posix()
    return "." if parent == "." else f"./{parent}"


def _in_file(result: dict[str, Any], m: Mutation) -> bool:
    """A red rung's new finding is in the mutated file (a vet or gofmt finding there)."""
    return any(
        d.get("file") == m.file and not d.get("preexisting")
        for r in result["rungs"]
        if r["state"] in ("red", "died")
        for d in r["diagnostics"]
    )


def _climbs(side: Side, root: Path, oneshot: bool) -> dict[str, Any]:
    """One side's verdicts of the mutation: through its host, one-shot, test.scoped."""
    wall, result = _verify(side, root, "--policy", "standard")
    load = os.getloadavg()[0]
    one_wall, one = (
        _verify(side, root, "--policy", "standard", "--no-host")
        if oneshot
        else (None, {"state": "not run", "rungs": []})
    )
    scoped = result
    if not any(r["rung"] == "test.scoped" and r["state"] != "skipped" for r in result["rungs"]):
        _, scoped = _verify(side, root, "--rung", "test.scoped")
    return {"wall": wall, "result": result, "one_wall": one_wall, "one": one, "scoped": scoped,
            "load": load}  # fmt: skip


def _one(
    root: Path, m: Mutation, baseline: set[str], sides: list[Side], oneshot: bool, turn: int
) -> dict[str, dict[str, Any]]:
    apply(root, m)
    climbs: dict[str, dict[str, Any]] = {}
    try:
        for k in range(len(sides)):
            side = sides[(turn + k) % len(sides)]
            climbs[side.name] = _climbs(side, root, oneshot)
        full_wall, full_text, _ = _run(
            ["go", "test", "-count=1", "-timeout", _TIMEOUT, "-json", "./..."], root, reference=True
        )
        own_wall, own_text, _ = _run(
            ["go", "test", "-count=1", "-timeout", _TIMEOUT, "-json", _package_of(root, m.file)],
            root,
            reference=True,
        )
    finally:
        apply(root, m, m.before)
    new = _failures(full_text) - baseline
    own_new = _failures(own_text) - baseline
    return {
        name: _row(m, c, new, own_new, full_wall, own_wall, turn=list(climbs).index(name))
        for name, c in climbs.items()
    }


def _row(
    m: Mutation,
    c: dict[str, Any],
    new: set[str],
    own_new: set[str],
    full_wall: float,
    own_wall: float,
    *,
    turn: int,
) -> dict[str, Any]:
    result, one, scoped, wall, one_wall = (
        c["result"],
        c["one"],
        c["scoped"],
        c["wall"],
        c["one_wall"],
    )
    scoped_rung: dict[str, Any] = next(
        (r for r in scoped["rungs"] if r["rung"] == "test.scoped"), {}
    )
    stopped = ("red", "died", "error")
    return {
        "file": m.file, "line": m.line, "kind": m.kind, "after": m.after.strip(),
        "ladder": result["state"],
        "red_rung": next((r["rung"] for r in result["rungs"] if r["state"] in stopped), None),
        "scoped_state": scoped_rung.get("state"),
        "scoped_packages": _scoped_count(scoped),
        "verify_wall_s": round(wall, 2),
        "oneshot_wall_s": None if one_wall is None else round(one_wall, 2),
        "oneshot_ladder": one["state"],
        "rung_s": {r["rung"]: r.get("duration_s") for r in result["rungs"]},
        "timing": result.get("timing"),
        "order": turn,
        "load": c["load"],
        "full_wall_s": round(full_wall, 2),
        "own_wall_s": round(own_wall, 2),
        "full_new_failures": sorted(new)[:10],
        "own_mode_caught": bool(own_new),
        "miss": bool(new)
        and any(r["state"] in ("green", "nothing_to_verify") for r in (result, one)),
        "own_mode_miss": bool(new) and not own_new,
        "false_red": not new
        and any(r["state"] in ("red", "died") and not _in_file(r, m) for r in (result, one)),
    }  # fmt: skip


def _project(
    project: Project,
    count: int,
    seed: int,
    work: Path,
    sides: list[Side],
    oneshot: bool,
    save: Callable[[dict[str, dict[str, Any]] | None], None],
) -> dict[str, dict[str, Any]]:
    root = _prepare(project, work)
    head = subprocess.run(
        ["git", "describe", "--tags", "--always"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    # Both build caches warm on HEAD: the reference runs' own, and go's default (the ladder's).
    _, base_text, _ = _run(["go", "test", "-count=1", "-json", "./..."], root, reference=True)
    baseline = _failures(base_text)
    for side in sides:
        _run([str(side.cli), "trust", "--project", str(root)], root, extra=side.env)
        _run(["go", "test", "-count=1", "./..."], root, extra=side.env)
        if oneshot:
            _run(["go", "test", "-count=1", "./..."], root, extra=side.oneshot_env)
    _, listed, _ = _run(
        ["go", "list", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}", "./..."],
        root,
    )
    with_tests = [ln for ln in listed.splitlines() if ln.strip()]
    for side in sides:
        _run([str(side.cli), "host", "start", "--project", str(root)], root, extra=side.env)
    out: dict[str, dict[str, Any]] = {
        side.name: {
            "project": project.name,
            "version": head,
            "baseline_failures": sorted(baseline),
            "packages_with_tests": len(with_tests),
            "mutations": [],
        }
        for side in sides
    }
    try:
        pool = candidates(root)
        for turn, m in enumerate(random.Random(seed).sample(pool, min(count, len(pool)))):
            rows = _one(root, m, baseline, sides, oneshot, turn)
            for name, row in rows.items():
                said = (
                    f"[{project.name} {name}] {m.file}:{m.line} {m.kind}: ladder {row['ladder']} "
                    f"({row['verify_wall_s']} s), full new {len(row['full_new_failures'])} "
                    f"({row['full_wall_s']} s), load {row['load']:.1f}"
                )
                print(said, file=sys.stderr)
                out[name]["mutations"].append(row)
            save(out)
    finally:
        for side in sides:
            _run([str(side.cli), "host", "stop", "--project", str(root)], root, extra=side.env)
    for name in out:
        out[name]["candidates"] = len(pool)
    return out


def _sides(specs: list[str], work: Path, oneshot_cache: Path) -> list[Side]:
    """`NAME=CLI` each (none: this venv's habitat in the environment as it is)."""
    if not specs:
        return [Side("habitat", HABITAT, {}, {**_ONESHOT_ENV})]
    sides = []
    for spec in specs:
        name, sep, cli = spec.partition("=")
        if not sep or not name or not Path(cli).is_file():
            sys.exit(f"--habitat {spec!r}: give NAME=PATH of a habitat CLI")
        home = work / f"home-{name}"
        home.mkdir(mode=0o700)
        env = {"HABITAT_HOME": str(home), "GOCACHE": str(work / f"gocache-{name}")}
        oneshot = {**env, "GOCACHE": str(oneshot_cache.with_name(f"gocache-oneshot-{name}"))}
        sides.append(Side(name, Path(cli), env, oneshot))
    return sides


def _summary(projects: list[dict[str, Any]], side: str) -> None:
    rows = []
    for p in projects:
        ms = p["mutations"]
        if not ms:
            continue
        caught = sum(1 for m in ms if m["full_new_failures"])
        scoped = [m["scoped_packages"] for m in ms if m["scoped_packages"] is not None]
        ones = [m["oneshot_wall_s"] for m in ms if m["oneshot_wall_s"] is not None]
        rows.append([
            f"{p['project']} {p['version']}", str(len(ms)), str(caught),
            str(sum(m["miss"] for m in ms)), str(sum(m["false_red"] for m in ms)),
            str(sum(m["own_mode_miss"] for m in ms)),
            f"{statistics.mean(scoped):.1f}/{p['packages_with_tests']}" if scoped else "-",
            f"{statistics.median(m['verify_wall_s'] for m in ms):.2f}",
            f"{statistics.median(ones):.2f}" if ones else "-",
            f"{statistics.median(m['full_wall_s'] for m in ms):.2f}",
            f"{statistics.median(m['load'] for m in ms):.1f}",
        ])  # fmt: skip
    print_table(
        f"Go toolchain ({side}): mutations, habitat verify (warm host) vs go test ./... "
        "(-count=1)",
        ["project", "mutations", "caught by full", "misses", "false reds",
         "touched-pkg-only misses",
         "scoped pkgs (mean/with tests)", "verify wall p50 s", "one-shot p50 s",
         "full suite p50 s", "load p50"],
        rows,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", default="go-cmp,glob")
    parser.add_argument("--mutations", type=int, default=10)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument(
        "--out",
        type=Path,
        default=DATA,
        help="the JSON written (after each row); with several --habitat, its name holds {habitat}",
    )
    parser.add_argument("--gocache", type=Path, help="the reference runs' GOCACHE (kept)")
    parser.add_argument(
        "--habitat",
        action="append",
        default=[],
        metavar="NAME=CLI",
        help="a habitat CLI to measure (twice or more: interleaved, each its own home)",
    )
    parser.add_argument("--no-oneshot", action="store_true", help="skip the --no-host climbs")
    args = parser.parse_args()
    if shutil.which("go") is None:
        sys.exit("go is not installed: the Go harness needs it")
    if len(args.habitat) > 1 and "{habitat}" not in str(args.out):
        sys.exit("--out: with several --habitat, put {habitat} in the file name")
    work = Path(tempfile.mkdtemp(prefix="go-harness-"))
    _REFERENCE_ENV["GOCACHE"] = str(args.gocache or work / "gocache-reference")
    _ONESHOT_ENV["GOCACHE"] = str(work / "gocache-oneshot")
    sides = _sides(args.habitat, work, work / "gocache-oneshot")
    projects: dict[str, list[dict[str, Any]]] = {side.name: [] for side in sides}

    def save(partial: dict[str, dict[str, Any]] | None = None) -> None:
        for side in sides:
            out = Path(str(args.out).replace("{habitat}", side.name))
            out.parent.mkdir(parents=True, exist_ok=True)
            mine = [*projects[side.name], *([partial[side.name]] if partial else [])]
            payload = {
                "seed": args.seed,
                "habitat": side.name,
                "cli": str(side.cli),
                "interleaved_with": [s.name for s in sides if s is not side],
                "projects": mine,
            }
            out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")

    try:
        for name in args.projects.split(","):
            got = _project(
                PROJECTS[name], args.mutations, args.seed, work, sides, not args.no_oneshot, save
            )
            for side in sides:
                projects[side.name].append(got[side.name])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for side in sides:
        _summary(projects[side.name], side.name)
    save()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
