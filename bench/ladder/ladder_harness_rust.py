"""The ladder on real Rust crates: seeded single-line mutations, `habitat verify` through a
warm host against `cargo test` of the whole crate (issue 27).

Per project (PROJECTS): its repository as the `fetch` tool mirrors it (`--mirrors`, one
`owner+name/repo` git folder each), exported at its commit into `--cache`, or a pinned
crate from crates.io (`cargo fetch` of a throwaway crate that depends on it, copied from
cargo's registry folder), committed as a fresh git repository; the dev-dependencies only
benchmarks use (criterion) and the `[[bench]]` targets are dropped so nothing but the
crate itself builds (`-j 1`: CARGO_BUILD_JOBS=1). The baseline is `cargo test
--no-fail-fast` on the clean tree (run twice: the second, warm, is the full suite's wall
with nothing to compile). The full suite
builds in a target folder of its own, so after each edit it compiles the change itself, as
the ladder does in the project's `target/`. Then the workspace host starts (a fresh
HABITAT_HOME) and for each mutation, on a clean copy:

1. `habitat verify --json` (policy standard: diagnose.files, compile.project, test.scoped)
   through the host, its wall;
2. the same one-shot (`--no-host`: the climb in the CLI's own process) in a target folder
   of its own (warmed on HEAD like the project's), so it compiles the edit itself;
3. the full suite, `cargo test --no-fail-fast --message-format=json`, its wall and what
   failed (libtest's report and compile errors, parsed by the toolchain's own parsers).

A miss: the full suite fails (a test or the build) and the ladder is green. A false red: the
ladder is red or died while the full suite passes, unless a red rung's new finding is on the
mutated line (a lint the project denies, caught by clippy, is the mutation's doing).

    .venv/bin/python bench/ladder/ladder_harness_rust.py [--projects semver,itoa]
        [--mutations 10] [--seed 9]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_habitat.verify.toolchains.rust.messages import compiler_messages, libtest_report

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: _report, peers
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_harness_rust_mutations import Mutation, apply, choose

from _report import print_table

REPO = Path(__file__).resolve().parents[2]
HABITAT = Path(sys.executable).parent / "habitat"
DATA = REPO / "docs" / "bench-data"


@dataclass(frozen=True)
class Project:
    name: str
    repo: str
    """owner/name on GitHub, mirrored as `owner+name`; or `crates.io:NAME@VERSION`."""
    sources: tuple[str, ...]
    """Files to mutate, relative to the crate."""
    why: str
    failing_at_head: str = ""
    """Why the clean tree's own suite fails (what no mutation touches): its failures are
    left out of what the full suite catches. Empty: the clean tree must pass."""
    unrelated: tuple[str, ...] = ()
    """Prefixes of failures of that part, whichever of its cases fail in a run (idna's
    failing UTS #46 cases differ from run to run)."""
    dev_dependencies: bool = False
    """A one-crate project's tests need its dev-dependencies (getopts' `log`): kept."""


PROJECTS = {
    "semver": Project(
        "semver",
        "dtolnay/semver",
        ("src/display.rs", "src/eval.rs", "src/identifier.rs", "src/impls.rs", "src/parse.rs"),
        "Cargo's version parser: 5 modules, integration tests only (tests/*.rs), doc tests",
    ),
    "itoa": Project(
        "itoa",
        "dtolnay/itoa",
        ("src/lib.rs",),
        "integer formatting: one module, one integration test target, doc tests",
    ),
    # Held out (issue 27): never used while the toolchain was built or tuned.
    "heck": Project(
        "heck",
        "crates.io:heck@0.5.0",
        ("src/lib.rs", "src/kebab.rs", "src/snake.rs", "src/title.rs", "src/upper_camel.rs"),
        "case conversion: 9 modules, unit tests in each, doc tests; the crates.io package",
    ),
    # Held out (issue 27, session 3): never used while the toolchain was built or tuned.
    "getopts": Project(
        "getopts",
        "crates.io:getopts@0.2.24",
        ("src/lib.rs",),
        "option parsing: one module, its unit tests in src/tests/mod.rs (1,321 lines), doc "
        "tests; the crates.io package (its [[test]] smoke target is not in the package)",
        dev_dependencies=True,
    ),
    # Held out (issue 27, session 4): the new-user flow's crates (ladder_rust_user_flow.py).
    "strsim": Project(
        "strsim",
        "crates.io:strsim@0.11.1",
        ("src/lib.rs",),
        "string similarity metrics: one module with 88 unit tests, an integration test "
        "target, 11 doc tests; the crates.io package",
    ),
    "scopeguard": Project(
        "scopeguard",
        "crates.io:scopeguard@1.2.0",
        ("src/lib.rs",),
        "scope guards: one module, its unit tests, an example, doc tests; the crates.io package",
    ),
    # Held out (issue 27, session 6): never used by bench/ before the HEAD-prebuild change.
    "unicode-width": Project(
        "unicode-width",
        "crates.io:unicode-width@0.2.3",
        ("src/lib.rs", "src/lookup.rs", "src/width_info.rs"),
        "display width of chars and strings: generated tables, unit tests in src/test.rs, an "
        "integration test target (tests/tests.rs, 690 lines), doc tests; the crates.io package",
    ),
    # Held out (issue 27, session 7): never used by bench/ before the check-target change.
    "unicase": Project(
        "unicase",
        "crates.io:unicase@2.8.1",
        ("src/lib.rs", "src/ascii.rs", "src/unicode/mod.rs"),
        "case-insensitive strings: 3 modules, 16 unit tests, a 2,000-line generated case-fold "
        "table, doc tests; no dependencies; the crates.io package",
    ),
    # Held out (issue 27, session 8): never used by bench/ before the lib_check change.
    "either": Project(
        "either",
        "crates.io:either@1.13.0",
        ("src/lib.rs", "src/iterator.rs", "src/into_either.rs"),
        "the Either enum: 3 modules, unit tests in lib.rs, 60-odd doc tests; no dependencies "
        "(serde optional, off); the crates.io package",
    ),
    # Held out (issue 27): new to bench/ with the tests' build's word on compile errors
    # (toolchains/rust/build_evidence.py); its repository as the `fetch` tool mirrors it.
    "humantime": Project(
        "humantime",
        "tailhook/humantime",
        ("src/duration.rs", "src/date.rs", "src/wrapper.rs"),
        "human-readable durations and RFC 3339 times: 4 modules, unit tests against the time "
        "and chrono crates with random inputs (rand), doc tests; no dependencies",
        dev_dependencies=True,
    ),
    # Held out (issue 27): new to bench/ with HEAD's builds taking the user's dependency
    # units (toolchains/rust/dep_units.py): registry dependencies and dev-dependencies.
    "textwrap": Project(
        "textwrap",
        "crates.io:textwrap@0.16.1",
        ("src/core.rs", "src/wrap.rs", "src/indentation.rs", "src/word_separators.rs"),
        "word wrapping: 13 modules with their unit tests, integration tests, doc tests; three "
        "registry dependencies (smawk, unicode-linebreak, unicode-width) and dev-dependencies "
        "(unic-emoji-char, version-sync); the crates.io package",
        dev_dependencies=True,
    ),
    # Held out (issue 27): new to bench/ with a failed build script reported as a build
    # failure (toolchains/rust/messages.build_script_failures); the crates.io package.
    "arrayvec": Project(
        "arrayvec",
        "crates.io:arrayvec@0.7.6",
        ("src/arrayvec.rs", "src/array_string.rs", "src/char.rs", "src/utils.rs"),
        "a vector and a string with fixed capacity: 7 modules (unsafe code), 2 unit tests, "
        "49 integration tests (tests/tests.rs), 42 doc tests; no default dependencies, "
        "dev-dependencies (bencher, matches, serde_test); the crates.io package",
        dev_dependencies=True,
    ),
    # New to bench/ (issue 27, 2026-12-08): shell words split and quoted, the str API and
    # the bytes one beside it, each with its unit tests, and doc tests; no dependency.
    "shlex": Project(
        "shlex",
        "crates.io:shlex@1.3.0",
        ("src/lib.rs", "src/bytes.rs"),
        "shell word splitting and quoting: two modules with their unit tests and doc tests; "
        "no dependencies; the crates.io package",
    ),
    # Held out (issue 27): a workspace of 6 crates with path dependencies between them
    # (percent-encoding <- form_urlencoded <- url, idna <- url; data-url alone).
    "url": Project(
        "url",
        "servo/rust-url",
        (
            "percent_encoding/src/lib.rs",
            "form_urlencoded/src/lib.rs",
            "data-url/src/lib.rs",
            "data-url/src/mime.rs",
            "data-url/src/forgiving_base64.rs",
            "url/src/host.rs",
            "url/src/path_segments.rs",
            "url/src/quirks.rs",
            "url/src/origin.rs",
        ),
        "the WHATWG URL parser's workspace: 6 crates, path dependencies, unit, integration "
        "(web-platform-tests data) and doc tests",
        unrelated=("UTS #46 ", "target: -p idna "),
        failing_at_head="idna's UTS #46 tests: 10 of its 12,808 cases expect the Unicode "
        "version before the newest icu crates' (no lock file in the repository); idna is not "
        "mutated, and no other crate's tests run idna's",
    ),
}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _missing_target(table: list[str], crate: Path) -> bool:
    """A `[[test]]` or `[[example]]` table whose `path` the package does not ship (a
    crates.io package leaves out what its `include` list does not name)."""
    if table[0].strip() not in ("[[test]]", "[[example]]"):
        return False
    paths = [ln.split("=", 1)[1].strip().strip('"') for ln in table if ln.startswith("path")]
    return bool(paths) and not (crate / paths[0]).exists()


def _strip_bench_only(manifest: Path, *, dev_dependencies: bool = True) -> None:
    """Drop the `[[bench]]` targets, the test and example targets the package does not ship,
    and (`dev_dependencies`) the dev-dependencies (a one-crate project's are its
    benchmarks' criterion only)."""
    tables: list[list[str]] = [[]]
    for line in manifest.read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            tables.append([])
        tables[-1].append(line)
    out: list[str] = []
    for table in tables:
        head = table[0].strip() if table else ""
        dropped = (dev_dependencies and "dev-dependencies" in head) or head == "[[bench]]"
        if table and head.startswith("[") and (dropped or _missing_target(table, manifest.parent)):
            continue
        out += table
    manifest.write_text("\n".join(out) + "\n", encoding="utf-8")


def _strip_workspace_benches(root: Path) -> str:
    """A workspace: every member's `[[bench]]` targets and `benches/` dropped (the tests
    need their dev-dependencies, kept); its version is the commit's."""
    for manifest in root.glob("*/Cargo.toml"):
        _strip_bench_only(manifest, dev_dependencies=False)
        shutil.rmtree(manifest.parent / "benches", ignore_errors=True)
    return "workspace"


def _from_crates_io(spec: str, root: Path, cache: Path) -> str:
    """The crate's package as cargo's registry folder holds it, copied to `root`."""
    name, version = spec.split("@")
    probe = cache / f"probe-{name}"
    shutil.rmtree(probe, ignore_errors=True)
    (probe / "src").mkdir(parents=True)
    (probe / "src" / "lib.rs").write_text("", encoding="utf-8")
    manifest = '[package]\nname = "probe"\nversion = "0.0.0"\nedition = "2021"\n'
    manifest += f'[dependencies]\n{name} = "={version}"\n'
    (probe / "Cargo.toml").write_text(manifest, encoding="utf-8")
    subprocess.run(["cargo", "fetch", "-q"], cwd=probe, check=True)
    home = Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo")
    source = next((home / "registry" / "src").glob(f"*/{name}-{version}"))
    shutil.rmtree(root)
    shutil.copytree(source, root)
    shutil.rmtree(probe)
    return f"crates.io {name} {version}"


def prepare(project: Project, mirrors: Path, cache: Path) -> tuple[Path, str, str]:
    """The crate at its mirrored commit as a fresh repository: (root, version, commit)."""
    root = cache / project.name
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    if project.repo.startswith("crates.io:"):
        commit = _from_crates_io(project.repo.removeprefix("crates.io:"), root, cache)
    else:
        mirror = mirrors / project.repo.replace("/", "+") / "repo"
        commit = _git(mirror, "rev-parse", "HEAD").strip()
        archive = subprocess.run(
            ["git", "archive", "HEAD"], cwd=mirror, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    if "[workspace]" in (root / "Cargo.toml").read_text(encoding="utf-8"):
        version = _strip_workspace_benches(root)
    else:
        _strip_bench_only(root / "Cargo.toml", dev_dependencies=not project.dev_dependencies)
        shutil.rmtree(root / "benches", ignore_errors=True)
        version = next(
            line.split('"')[1]
            for line in (root / "Cargo.toml").read_text(encoding="utf-8").splitlines()
            if line.startswith("version")
        )
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", f"{project.repo} {commit[:12]} without its bench-only parts")
    return root, version, commit


_STARTED = re.compile(r"host started pid (\d+)")


def host_settled(started: str, *, quiet_s: float = 1.0, bound_s: float = 120.0) -> float | None:
    """After `habitat host start` said `started`: wait until the host's process has used no
    CPU for `quiet_s` (its own start done: the MCP side and the climb's modules it imports in
    a quiet moment), at most `bound_s`; the seconds waited, None when no pid was said or
    its /proc entry went away. A host started right before another side's verify is still
    importing then, holding the CPU that side's verdict needs: the harnesses' second-listed
    habitat was slower in both orders (issue 27), as its host was started last."""
    m = _STARTED.search(started)
    if m is None:
        return None
    stat = Path(f"/proc/{m[1]}/stat")
    t0 = time.monotonic()

    def cpu() -> int | None:
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        return int(fields[11]) + int(fields[12])  # utime + stime (all its threads)

    last, since = cpu(), time.monotonic()
    while last is not None and time.monotonic() - t0 < bound_s:
        time.sleep(0.1)
        now = cpu()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return round(time.monotonic() - t0, 2)
    return None if last is None else round(time.monotonic() - t0, 2)


class Runner:
    def __init__(self, root: Path, home: Path) -> None:
        self.root, self.home = root, home
        self.env = {**os.environ, "HABITAT_HOME": str(home), "CARGO_BUILD_JOBS": "1"}
        self.limit_s = 600.0
        self.oneshot = True

    def timed(self, argv: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
        t0 = time.perf_counter()
        with subprocess.Popen(
            argv,
            cwd=self.root,
            env=env or self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        ) as proc:
            try:
                out, _ = proc.communicate(timeout=self.limit_s)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGTERM)
                out, _ = proc.communicate()
                out += f"\nTIMEOUT after {self.limit_s:.0f} s"
        return time.perf_counter() - t0, out

    def full(self) -> tuple[float, list[str], int]:
        """The whole suite: its wall, what failed (tests, compile errors), tests run. In a
        target folder of its own, so it compiles each mutation itself as the ladder does
        (in the project's `target/`), neither reusing the other's build."""
        argv = ["cargo", "test", "--no-fail-fast", "--message-format=json"]
        own = {**self.env, "CARGO_TARGET_DIR": str(self.home / "full-target")}
        wall, text = self.timed(argv, own)
        report = libtest_report(text, self.root)
        errors = [
            d for d in compiler_messages(text, self.root, tool="rustc") if d.severity == "error"
        ]
        failed = [d.message.split(": ")[0] for d in report.failures]
        # Every `test NAME ... FAILED` line too, whichever parser the run imports (a
        # harness = false target's only word on a failure; "before" runs parse with theirs).
        failed += [
            name
            for name in re.findall(r"(?m)^test (.+) \.\.\. FAILED$", text)
            if name not in failed
        ]
        # And every target cargo says failed (a harness = false target whose main panicked
        # says nothing else: exit 101, no test lines); the clean tree's are left out later.
        failed += [
            f"target: {args}"
            for args in re.findall(r"error: test failed, to rerun pass `([^`]*)`", text)
        ]
        failed += [f"compile: {d.file}:{d.line} {d.code}" for d in errors]
        if "TIMEOUT after" in text:
            failed.append("TIMEOUT")
        return wall, failed, report.passed + report.failed

    def verify(self, *extra: str) -> tuple[float, dict[str, Any]]:
        env = None
        if "--no-host" in extra:  # its own target folder: it compiles the edit itself
            env = {**self.env, "CARGO_TARGET_DIR": str(self.home / "oneshot-target")}
        wall, text = self.timed([str(HABITAT), "verify", "--json", *extra], env)
        start = text.find("{")
        try:
            return wall, json.loads(text[start:]) if start >= 0 else {"error": text[-500:]}
        except ValueError:
            return wall, {"error": text[-500:]}

    def host(self, action: str) -> None:
        _, text = self.timed([str(HABITAT), "host", action, "--project", str(self.root)])
        print(f"host {action}: {text.strip()[-200:]}", file=sys.stderr)


def _rung(result: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((r for r in result.get("rungs", []) if r["rung"] == name), None)


def _passed_failed(rung: dict[str, Any] | None) -> int | None:
    for note in (rung or {}).get("notes", []):
        if note.endswith(" failed") and " passed, " in note:
            passed, failed = note.split(" passed, ")
            return int(passed) + int(failed.split()[0])
    return None


def _on_line(result: dict[str, Any], m: Mutation) -> bool:
    """A red rung's new finding is on the mutated line."""
    return any(
        d.get("file") == m.file and d.get("line") == m.line and not d.get("preexisting")
        for r in result.get("rungs", [])
        if r["state"] == "red"
        for d in r.get("diagnostics", [])
    )


def _one(
    run: Runner, m: Mutation, total: int, at_head: set[str], unrelated: tuple[str, ...] = ()
) -> dict[str, Any]:
    apply(run.root, m)
    try:
        wall, result = run.verify()
        one_wall, one = run.verify("--no-host") if run.oneshot else (0.0, {})
        full_wall, failed, _ = run.full()
    finally:
        _git(run.root, "checkout", "--", m.file)
    failed = [f for f in failed if f not in at_head and not f.startswith(unrelated or ("\0",))]
    state = result.get("state", "error")
    scoped = _rung(result, "test.scoped")
    caught = bool(failed)
    red = state in ("red", "died")
    one_state = one.get("state", "error") if run.oneshot else "not run"
    one_red = one_state in ("red", "died")
    return {
        "mutation": m.label,
        "before": m.before.strip(),
        "after": m.after.strip(),
        "ladder_state": state,
        "red_rungs": [r["rung"] for r in result.get("rungs", []) if r["state"] in ("red", "died")],
        "scoped_state": scoped["state"] if scoped else None,
        "scoped_commands": [scoped["command_line"]]
        if scoped and scoped.get("command_line")
        else [],
        "scoped_tests": _passed_failed(scoped),
        "full_tests": total,
        "full_caught": caught,
        "full_failed": failed[:5],
        "oneshot_state": one_state,
        "miss": caught and "green" in (state, one_state),
        "false_red": not caught
        and ((red and not _on_line(result, m)) or (one_red and not _on_line(one, m))),
        "verify_s": round(wall, 2),
        "oneshot_s": round(one_wall, 2),
        "load": os.getloadavg()[0],
        "rung_s": {r["rung"]: r.get("duration_s") for r in result.get("rungs", [])},
        "full_s": round(full_wall, 2),
        "error": result.get("error"),
    }


def run_project(project: Project, args: argparse.Namespace) -> dict[str, Any]:
    cache = args.cache.resolve()
    root, version, commit = prepare(project, args.mirrors, cache)
    home = Path(tempfile.mkdtemp(prefix=f"rust-ladder-{project.name}-", dir=cache))
    run = Runner(root, home)
    run.oneshot = not args.no_oneshot
    cold_wall, _, _ = run.full()
    warm_wall, base_failed, total = run.full()
    run.timed(["cargo", "test", "--no-run"])  # the ladder's target/ built once, as a user's is
    one = {**run.env, "CARGO_TARGET_DIR": str(home / "oneshot-target")}
    if run.oneshot:
        run.timed(["cargo", "test", "--no-run"], one)
    if base_failed and not project.failing_at_head:
        raise SystemExit(f"{project.name}: the clean tree fails its own suite: {base_failed}")
    print(
        f"[{project.name}] {total} tests; full cold {cold_wall:.1f}s, warm {warm_wall:.1f}s",
        file=sys.stderr,
        flush=True,
    )
    run.host("start")
    rows: list[dict[str, Any]] = []
    try:
        for i, m in enumerate(choose(root, list(project.sources), args.mutations, args.seed)):
            rows.append(_one(run, m, total, set(base_failed), project.unrelated))
            r = rows[-1]
            print(
                f"[{project.name}] {i + 1:2}/{args.mutations} {m.label}: full "
                f"{'caught' if r['full_caught'] else 'green'} ({r['full_s']}s), ladder "
                f"{r['ladder_state']} {r['red_rungs']} ({r['verify_s']}s)"
                f"{' MISS' if r['miss'] else ''}{' FALSE-RED' if r['false_red'] else ''}",
                file=sys.stderr,
                flush=True,
            )
    finally:
        run.host("stop")
    shutil.rmtree(home, ignore_errors=True)
    return {
        "project": f"{project.name} {version}",
        "repository": commit
        if commit.startswith("crates.io")
        else f"github.com/{project.repo} @ {commit[:12]}",
        "why": project.why,
        "failing_at_head": sorted(base_failed) if project.failing_at_head else [],
        "failing_at_head_why": project.failing_at_head,
        "tests": total,
        "full_cold_s": round(cold_wall, 2),
        "full_warm_s": round(warm_wall, 2),
        "mutations": rows,
    }


def summarise(p: dict[str, Any]) -> dict[str, Any]:
    rows = p["mutations"]
    verify = [r["verify_s"] for r in rows]
    full = [r["full_s"] for r in rows]
    scoped = [r["scoped_tests"] for r in rows if r["scoped_tests"] is not None]
    return {
        "project": p["project"],
        "mutations": len(rows),
        "caught_by_full": sum(r["full_caught"] for r in rows),
        "ladder_red": sum(r["ladder_state"] in ("red", "died") for r in rows),
        "misses": sum(r["miss"] for r in rows),
        "false_reds": sum(r["false_red"] for r in rows),
        "scoped_tests_median": statistics.median(scoped) if scoped else None,
        "full_tests": p["tests"],
        "verify_median_s": round(statistics.median(verify), 2) if verify else None,
        "oneshot_median_s": round(statistics.median(r["oneshot_s"] for r in rows), 2)
        if any(r["oneshot_state"] != "not run" for r in rows)
        else None,
        "load_median": round(statistics.median(r["load"] for r in rows), 1),
        "verify_max_s": max(verify) if verify else None,
        "full_median_s": round(statistics.median(full), 2) if full else None,
        "full_warm_s": p["full_warm_s"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", default="semver,itoa")
    parser.add_argument("--mutations", type=int, default=10)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "rust-ladder")
    parser.add_argument("--out", default="ladder_harness_rust")
    parser.add_argument(
        "--no-oneshot", action="store_true", help="only the host's verdict and the full suite"
    )
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    results = [run_project(PROJECTS[name], args) for name in args.projects.split(",")]
    summaries = [summarise(p) for p in results]
    shown = {
        "project": "project",
        "mutations": "n",
        "caught_by_full": "full caught",
        "misses": "misses",
        "false_reds": "false reds",
        "scoped_tests_median": "scoped tests",
        "full_tests": "tests",
        "verify_median_s": "verdict s (host)",
        "oneshot_median_s": "one-shot s",
        "full_median_s": "full s",
        "load_median": "load",
    }
    rows = [[str(s[key]) for key in shown] for s in summaries]
    print_table("Rust ladder harness (medians)", list(shown.values()), rows)
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{args.out}.json"
    payload = {"seed": args.seed, "summaries": summaries, "projects": results}
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
