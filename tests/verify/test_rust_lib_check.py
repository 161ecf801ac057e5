"""A compile error judged first by the crates' own check on the tree and on HEAD
(toolchains/rust/lib_check.py), else by the rung's own command on HEAD: red only for an
error HEAD does not have, whichever rung meets it first. Real cargo, clippy and rustc on
crates made here, their HEAD in git. Skipped only where cargo or clippy is not installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

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


def _crate(root: Path, lib: str) -> Path:
    manifest = '[package]\nname = "lc"\nversion = "0.1.0"\nedition = "2021"\n'
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
    assert any("judged by `cargo check" in n and "--lib --bins" in n for n in red.notes)
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
    # The tests' build fails as it failed at HEAD: pre-existing, listed, not red.
    assert tests.state == "green", tests
    assert [(d.code, d.preexisting) for d in tests.diagnostics] == [("E0277", True)]
    assert "pre-existing at HEAD" in (tests.reason or ""), tests.reason


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
    from agent_habitat.verify.toolchains.rust.cargo import check_target_dir, head_target_dir
    from agent_habitat.verify.toolchains.rust.lib_check import lib_target_dir

    ctx = tree_ctx(commit_tree(tmp_path / "p", {"Cargo.toml": ""}), "d")
    folders = {lib_target_dir(ctx), check_target_dir(ctx), head_target_dir(ctx)}
    assert len(folders) == 3
    assert all(f.is_relative_to(Workspace.for_project(ctx.root).state_dir) for f in folders)
