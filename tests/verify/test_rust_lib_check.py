"""A compile error judged first by the crates' own check on the tree and on HEAD
(toolchains/rust/lib_check.py), else by the rung's own command on HEAD: red only for an
error HEAD does not have, whichever rung meets it first. Real cargo, clippy and rustc on
crates made here, their HEAD in git. Skipped only where cargo or clippy is not installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, run_ladder
from agent_habitat.verify.models import RungResult
from agent_habitat.verify.rungs.compare import cache_of
from agent_habitat.verify.toolchains.rust.runners import RUNNERS
from agent_habitat.verify.toolchains.rust.spool_watch import compile_error
from agent_habitat.workspace import Workspace
from git_tree import commit_tree, write
from ladder_runs import tree_ctx

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        shutil.which("cargo") is None or shutil.which("clippy-driver") is None,
        reason="cargo and clippy are not installed here",
    ),
]

_LIB = """pub fn double(x: u64) -> u64 {
    x * 2
}
pub fn triple(x: u64) -> u64 {
    x * 3
}
#[cfg(test)]
mod tests {
    #[test]
    fn doubles() {
        assert_eq!(super::double(2), 4);
    }
}
"""
_BROKEN_AT_HEAD = _LIB.replace("x * 3", "x * true")
"""A library that does not compile at HEAD (E0277 in `triple`)."""


def _crate(root: Path, lib: str, manifest_tail: str = "") -> Path:
    manifest = '[package]\nname = "lc"\nversion = "0.1.0"\nedition = "2021"\n' + manifest_tail
    root = commit_tree(
        root, {"Cargo.toml": manifest, "src/lib.rs": lib, ".gitignore": "target/\nCargo.lock\n"}
    )
    # The lock file a user's first build leaves (HEAD's export copies it).
    subprocess.run(["cargo", "generate-lockfile"], cwd=root, check=True, capture_output=True)
    return root


def _red(rungs: list[RungResult]) -> RungResult:
    red = [r for r in rungs if r.state == "red"]
    assert len(red) == 1, rungs
    return red[0]


def _spools(root: Path, suffix: str) -> list[Path]:
    folder = Workspace.for_project(root).spool_dir
    return [p for p in folder.rglob(f"*{suffix}") if p.name.endswith(suffix)]


def _cached_runs(root: Path) -> int:
    folder = cache_of(tree_ctx(root, "count")).folder
    return len(list(folder.rglob("*.json"))) if folder.is_dir() else 0


async def test_a_new_error_in_the_librarys_code_is_red_from_its_own_check_on_both_sides(
    tmp_path: Path,
) -> None:
    root = _crate(tmp_path / "lc", _LIB)
    write(root, "src/lib.rs", _LIB.replace("x * 2", "x * true"))
    climbed = await run_ladder(root, LadderRequest(), bus=InMemoryEventBus("t"))
    red = _red(climbed.rungs)
    assert climbed.state == "red"
    assert [(d.code, d.line, d.preexisting) for d in red.diagnostics] == [("E0277", 2, False)]
    assert (red.new_findings, red.preexisting_findings) == (1, 0)
    assert (red.baseline or "").startswith("HEAD "), red.baseline
    # The tests' build told the library's own errors (the plain unit's, cargo named it):
    # HEAD's check of the library alone judged them, and no check ran on the tree.
    assert any(
        "judged by the tests' build's errors" in n and "--lib --bins` on HEAD" in n
        for n in red.notes
    ), red.notes
    assert _spools(root, ".lib.base.out")
    assert not _spools(root, ".lib.out")
    # HEAD answered the check of the library alone (cached), never clippy of every target.
    assert _cached_runs(root) == 1


async def test_an_error_already_at_head_is_never_red_in_either_rung(tmp_path: Path) -> None:
    # HEAD's library does not compile; the change is elsewhere and adds no error. Its check
    # finds only HEAD's error: it decides nothing, and each rung asks HEAD its own command.
    root = _crate(tmp_path / "lc", _BROKEN_AT_HEAD)
    write(root, "src/lib.rs", _BROKEN_AT_HEAD.replace("x * 2", "x + x"))
    climbed = await run_ladder(root, LadderRequest(), bus=InMemoryEventBus("t"))
    states = {r.rung: r.state for r in climbed.rungs}
    assert "red" not in states.values(), climbed.rungs
    lint, tests = climbed.rungs[0], climbed.rungs[-1]
    assert (lint.new_findings, lint.preexisting_findings) == (0, 1), lint
    # The tests' build fails as it failed at HEAD: pre-existing, listed, not red; but no
    # test ran, so not green either (nothing was checked).
    assert tests.state == "error", tests
    assert [(d.code, d.preexisting) for d in tests.diagnostics] == [("E0277", True)]
    assert (tests.reason or "").startswith("no test ran: the tests' build fails as at HEAD")
    assert climbed.state == "error", climbed.reason


async def test_a_new_error_in_test_code_is_red_against_heads_build_of_the_tests(
    tmp_path: Path,
) -> None:
    # The library compiles on both sides, so its check decides nothing: HEAD's build of the
    # same tests, which passes, makes the tests' error the change's.
    root = _crate(tmp_path / "lc", _LIB)
    write(root, "src/lib.rs", _LIB.replace("double(2), 4)", "double(2), true)"))
    tests = await RUNNERS["test.scoped"](tree_ctx(root, "t1"))
    assert tests.state == "red", tests
    errors = [d for d in tests.diagnostics if d.severity == "error"]
    assert errors, tests.diagnostics
    assert not any(d.preexisting for d in errors), errors
    assert errors[0].source == "rustc"
    assert (tests.baseline or "").startswith("HEAD "), tests.baseline


_TEST_BROKEN_AT_HEAD = _LIB.replace("double(2), 4)", "double(2), true)")
"""A library whose own code compiles at HEAD and whose unit tests do not (E0308 under
`cfg(test)`): `cargo test` fails at HEAD, `cargo check --lib` passes."""


async def test_an_error_heads_unit_tests_have_is_not_red_though_heads_library_check_passes(
    tmp_path: Path,
) -> None:
    # Only the test harness fails to build, on both sides: its error is not the library's,
    # whose check HEAD passes, so it must not be judged new against that check.
    root = _crate(tmp_path / "lc", _TEST_BROKEN_AT_HEAD)
    write(root, "src/lib.rs", _TEST_BROKEN_AT_HEAD.replace("x * 3", "x + x + x"))
    climbed = await run_ladder(root, LadderRequest(), bus=InMemoryEventBus("t"))
    assert climbed.state != "red", climbed.rungs
    tests = climbed.rungs[-1]
    assert [(d.code, d.preexisting) for d in tests.diagnostics] == [("E0308", True)], tests
    # The tests' build told the library's own code compiles: nothing ran on the tree for it.
    assert not _spools(root, ".lib.out")


async def test_a_new_library_error_beside_an_error_heads_unit_tests_have_is_red(
    tmp_path: Path,
) -> None:
    # Both units of the library fail: the new error is said by each, HEAD's test error by the
    # test harness alone. Red for the new one only.
    root = _crate(tmp_path / "lc", _TEST_BROKEN_AT_HEAD)
    write(root, "src/lib.rs", _TEST_BROKEN_AT_HEAD.replace("x * 2", "x * false"))
    climbed = await run_ladder(root, LadderRequest(), bus=InMemoryEventBus("t"))
    red = _red(climbed.rungs)
    new = [(d.code, d.line) for d in red.diagnostics if not d.preexisting]
    assert new == [("E0277", 2)], red.diagnostics


_SELF_FEATURE = (
    '[features]\nextra = []\n[dev-dependencies]\nlc = { path = ".", features = ["extra"] }\n'
)
_EXTRA_BROKEN = _LIB + '#[cfg(feature = "extra")]\npub fn broken() -> u8 {\n    true\n}\n'
"""A library whose tests turn on a feature of its own (a dev-dependency on itself), under
which its code does not compile at HEAD: `cargo test` fails there, `cargo check --lib`
(no dev-dependencies, no feature) passes."""


async def test_an_error_under_a_feature_only_the_tests_turn_on_is_not_red_when_head_has_it(
    tmp_path: Path,
) -> None:
    # The tests' build of the plain library has the feature on, HEAD's check of it has not:
    # its errors are not that check's to judge (build_evidence: dev-dependencies by path).
    root = _crate(tmp_path / "lc", _EXTRA_BROKEN, _SELF_FEATURE)
    write(root, "src/lib.rs", _EXTRA_BROKEN.replace("x * 3", "x + x + x"))
    climbed = await run_ladder(root, LadderRequest(), bus=InMemoryEventBus("t"))
    assert climbed.state != "red", climbed.rungs
    tests = climbed.rungs[-1]
    assert {(d.code, d.preexisting) for d in tests.diagnostics} == {("E0308", True)}, tests


_WAIT_FOR_HEAD = """use std::{path::Path, thread, time::{Duration, Instant}};
fn main() {
    let start = Instant::now();
    while !Path::new(r"MARK").exists() {
        assert!(start.elapsed() < Duration::from_secs(90), "HEAD's check never started");
        thread::sleep(Duration::from_millis(20));
    }
}
"""


async def test_heads_check_starts_with_the_tests_build_not_at_its_first_error(
    tmp_path: Path,
) -> None:
    # The first climb at a HEAD: HEAD's check of the crate's own code starts with the tests'
    # build (lib_check.head_early). The tree's build script waits for the mark HEAD's own
    # build script leaves, so the tree's build gets to its compile error only once that
    # check runs; started at the first compile error instead, it never would.
    mark = tmp_path / "head-started"
    head_build = f'fn main() {{\n    std::fs::write(r"{mark}", "").unwrap();\n}}\n'
    root = _crate(tmp_path / "lc", _LIB)
    write(root, "build.rs", head_build)
    subprocess.run(["git", "add", "build.rs"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "build script"],
        cwd=root,
        check=True,
    )
    write(root, "build.rs", _WAIT_FOR_HEAD.replace("MARK", str(mark)))
    write(root, "src/lib.rs", _LIB.replace("x * 2", "x * true"))
    tests = await RUNNERS["test.scoped"](tree_ctx(root, "e1"))
    assert tests.state == "red", tests.reason
    assert [(d.code, d.line, d.preexisting) for d in tests.diagnostics] == [("E0277", 2, False)]
    assert any("--lib --bins` on HEAD" in n for n in tests.notes), tests.notes
    assert mark.exists()


async def test_an_error_on_a_line_the_change_added_is_red_without_waiting_for_head(
    tmp_path: Path,
) -> None:
    # HEAD's build script waits for a mark nobody makes (90 s, then panics): HEAD's check
    # cannot answer in this test's time. The change adds a line with a type error (and a
    # build script that does not wait): no finding of HEAD's could match an error on a line
    # HEAD never had, so the verdict is red without HEAD's check.
    never = tmp_path / "never"
    root = _crate(tmp_path / "lc", _LIB)
    write(root, "build.rs", _WAIT_FOR_HEAD.replace("MARK", str(never)))
    subprocess.run(["git", "add", "build.rs"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "build script"],
        cwd=root,
        check=True,
    )
    write(root, "build.rs", "fn main() {}\n")
    write(root, "src/lib.rs", _LIB.replace("    x * 2\n", '    let _two: u64 = "2";\n    x * 2\n'))
    with anyio.fail_after(80):
        tests = await RUNNERS["test.scoped"](tree_ctx(root, "a1"))
    assert tests.state == "red", tests.reason
    assert [(d.code, d.line, d.preexisting) for d in tests.diagnostics] == [("E0308", 2, False)]
    assert "on lines the change added" in (tests.baseline or ""), tests.baseline
    assert any("on lines the change added whose text HEAD's files lack" in n for n in tests.notes)
    assert not never.exists()


def test_a_compile_error_line_is_one_rustc_reports_not_a_clippy_lint() -> None:
    message = '{"reason":"compiler-message","message":{"level":"error","code":%s}}'
    assert compile_error((message % '{"code":"E0277"}').encode())
    assert compile_error((message % "null").encode())
    assert compile_error((message % '{"code":"unused_variables"}').encode())
    assert not compile_error((message % '{"code":"clippy::ptr_arg"}').encode())
    warning = '{"reason":"compiler-message","message":{"level":"warning","code":null}}'
    assert not compile_error(warning.encode())
    assert not compile_error(b'{"reason":"compiler-message","message":{"level":"error"')


def test_the_lib_check_builds_apart_from_the_tests_and_clippy(tmp_path: Path) -> None:
    from agent_habitat.verify.toolchains.rust.cargo import (
        check_target_dir,
        head_target_dir,
        lib_target_dir,
    )

    ctx = tree_ctx(commit_tree(tmp_path / "p", {"Cargo.toml": ""}), "d")
    folders = {lib_target_dir(ctx), check_target_dir(ctx), head_target_dir(ctx)}
    assert len(folders) == 3
    assert all(f.is_relative_to(Workspace.for_project(ctx.root).state_dir) for f in folders)
