"""The Rust rungs on real Cargo workspaces made here: real cargo, clippy and libtest, a git
HEAD to compare with. Skipped only where cargo is not installed."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.select.selection import explicit_selection
from agent_habitat.verify.toolchains import snapshot_of
from agent_habitat.verify.toolchains.rust.runners import RUNNERS
from git_tree import commit_tree, write
from ladder_runs import climb_one, tree_ctx

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed here"),
]

_LIB = """#![deny(unused_variables)]
pub fn double(x: u64) -> u64 {
    x * 2
}
pub fn old() {
    let kept = 1;
}
"""
_BASIS = "pub fn double(x: u64) -> u64 {\n    x * 2\n}\n"
_CORE_TESTS = """#[test]
fn doubles() {
    assert_eq!(basis::double(2), 4);
}
"""
_APP = """pub fn quadruple(x: u64) -> u64 {
    basis::double(basis::double(x))
}
#[cfg(test)]
mod tests {
    #[test]
    fn quadruples() {
        assert_eq!(super::quadruple(1), 4);
    }
}
"""


def _manifest(name: str) -> str:
    return f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n'


def _workspace(root: Path) -> Path:
    return commit_tree(
        root,
        {
            "Cargo.toml": '[workspace]\nmembers = ["basis", "app", "legacy"]\nresolver = "2"\n',
            "basis/Cargo.toml": _manifest("basis"),
            "basis/src/lib.rs": _BASIS,
            "legacy/Cargo.toml": _manifest("legacy"),
            "legacy/src/lib.rs": _LIB,
            "basis/tests/api.rs": _CORE_TESTS,
            "app/Cargo.toml": _manifest("app")
            + '\n[dependencies]\nbasis = { path = "../basis" }\n',
            "app/src/lib.rs": _APP,
            ".gitignore": "target/\nCargo.lock\n",
        },
    )


def _ctx(root: Path, ladder_id: str) -> RungContext:
    return tree_ctx(root, ladder_id)


@pytest.fixture(scope="module")
def _built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _workspace(tmp_path_factory.mktemp("cargo") / "ws")


@pytest.fixture
def project(_built: Path, tmp_path: Path) -> Path:
    # Each test starts from HEAD, whichever worker runs it and whatever ran before: a copy
    # of the module's workspace, its cargo build folder with it so nothing compiles twice.
    return Path(shutil.copytree(_built, tmp_path / "ws", symlinks=True))


async def test_a_finding_already_at_head_is_listed_but_not_red(project: Path) -> None:
    write(project, "legacy/src/lib.rs", _LIB.replace("x * 2", "x * 2 // doubled"))
    result = await RUNNERS["diagnose.files"](_ctx(project, "v1"))
    assert result.state == "green", result.reason
    assert (result.new_findings, result.preexisting_findings) == (0, 1)
    assert (result.baseline or "").startswith("HEAD ")
    assert result.tool == "cargo clippy" or result.tool == "cargo check"
    assert any(n.startswith("rust toolchain: cargo") for n in result.notes)


async def test_compile_after_a_green_clippy_of_the_same_crates_is_not_checked_twice(
    project: Path,
) -> None:
    # The same climb (ladder id v1c) as a green diagnose.files: clippy checked legacy. The
    # test makes that climb itself: under xdist it may run on a worker of its own.
    write(project, "legacy/src/lib.rs", _LIB.replace("x * 2", "x * 2 // doubled"))
    linted = await RUNNERS["diagnose.files"](_ctx(project, "v1c"))
    assert linted.state == "green", linted.reason
    result = await RUNNERS["compile.project"](_ctx(project, "v1c"))
    assert result.state == "green", result.reason
    assert result.rung == "compile.project"
    assert "cargo check" not in result.command_line
    assert any("not checked twice" in n for n in result.notes)
    # A climb without that clippy run checks for itself.
    fresh = await RUNNERS["compile.project"](_ctx(project, "v1b"))
    assert fresh.state == "green", fresh.reason
    assert fresh.command[:2] == ["cargo", "check"]


async def test_a_new_denied_lint_in_a_touched_file_is_red_at_its_line(project: Path) -> None:
    write(project, "legacy/src/lib.rs", _LIB.replace("x * 2", "let unused = 3;\n    x * 2"))
    result = await RUNNERS["diagnose.files"](_ctx(project, "v2"))
    assert result.state == "red", result.reason
    new = [d for d in result.diagnostics if not d.preexisting and d.severity == "error"]
    assert [(d.file, d.line, d.code) for d in new] == [("legacy/src/lib.rs", 3, "unused_variables")]
    assert result.preexisting_findings == 1


async def test_a_type_error_is_red_in_compile_and_reaches_the_dependent_crate(
    project: Path,
) -> None:
    write(project, "legacy/src/lib.rs", _LIB)
    write(project, "basis/src/lib.rs", _BASIS.replace("x * 2", '"two"'))
    result = await RUNNERS["compile.project"](_ctx(project, "v3"))
    assert result.state == "red", result.reason
    assert result.command[-4:] == ["-p", "app", "-p", "basis"]
    assert any(d.code == "E0308" and d.file == "basis/src/lib.rs" for d in result.diagnostics)


async def test_build_affected_builds_the_affected_crates_and_reports_their_errors(
    project: Path,
) -> None:
    write(project, "basis/src/lib.rs", _BASIS.replace("x * 2", "x * y"))
    result = await RUNNERS["build.affected"](_ctx(project, "v3b"))
    assert result.state == "red", result.reason
    assert result.command[:2] == ["cargo", "build"]
    assert result.command[-4:] == ["-p", "app", "-p", "basis"]
    assert [(d.file, d.code) for d in result.diagnostics if d.severity == "error"] == [
        ("basis/src/lib.rs", "E0425")
    ]


async def test_a_behaviour_change_fails_the_dependent_crates_test_in_test_scoped(
    project: Path,
) -> None:
    write(project, "basis/src/lib.rs", _BASIS.replace("x * 2", "x * 3"))
    ctx = _ctx(project, "v4")
    result = await RUNNERS["test.scoped"](ctx)
    assert result.state == "red", result.reason
    failed = {d.message.split(": ")[0] for d in result.diagnostics}
    assert failed == {"doubles", "tests::quadruples"}
    assert "crates app, basis" in " ".join(result.notes)
    assert (ctx.selection.full, ctx.selection.tests) == (False, ["app", "basis"])
    assert ctx.selection.reasons


async def test_an_integration_test_file_runs_that_target_alone(project: Path) -> None:
    write(project, "basis/src/lib.rs", _BASIS)
    write(project, "basis/tests/api.rs", _CORE_TESTS.replace("4)", "5)"))
    ctx = _ctx(project, "v5")
    result = await RUNNERS["test.scoped"](ctx)
    assert result.state == "red", result.reason
    assert result.command[-4:] == ["-p", "basis", "--test", "api"]
    assert ctx.selection.tests == ["basis/tests/api.rs"]  # that target alone
    assert [d.file for d in result.diagnostics] == ["basis/tests/api.rs"]


async def test_an_explicit_filter_goes_to_libtest_as_its_name_filter(project: Path) -> None:
    write(project, "basis/tests/api.rs", _CORE_TESTS.replace("4)", "5)"))
    ctx = _ctx(project, "v5b")
    ctx.selection = explicit_selection(["doubles"])
    result = await RUNNERS["test.scoped"](ctx)
    # Only tests/api.rs's `doubles` matches, and it fails with this edit.
    assert result.state == "red", result.reason
    assert result.command[-2:] == ["--", "doubles"]
    assert "0 passed, 1 failed" in result.notes


async def test_a_crashing_test_binary_is_died_with_its_signal(project: Path) -> None:
    write(project, "basis/tests/api.rs", _CORE_TESTS)
    crash = "\n#[test]\nfn crashes() {\n    std::process::abort();\n}\n"
    write(project, "app/src/lib.rs", _APP + crash)
    result = await RUNNERS["test.scoped"](_ctx(project, "v6"))
    assert result.state == "died", result.reason
    assert result.signal == "SIGABRT"
    assert "app/src/lib.rs" in (result.reason or "")
    assert result.command[-2:] == ["-p", "app"]


async def test_the_whole_workspace_passes_in_test_full(project: Path) -> None:
    write(project, "app/src/lib.rs", _APP)
    write(project, "legacy/src/lib.rs", _LIB.replace("let kept", "let _kept"))
    result = await RUNNERS["test.full"](_ctx(project, "v7"))
    assert result.state == "green", result.reason
    assert "--workspace" in result.command
    assert "2 passed, 0 failed" in result.notes


async def test_a_configured_command_wins_over_cargo(project: Path) -> None:
    ctx = _ctx(project, "v8")
    ctx.config = LadderConfig.model_validate({"test.full": "true"})
    result = await RUNNERS["test.full"](ctx)
    assert (result.state, result.tool, result.command) == (
        "green",
        "configured",
        ["/bin/sh", "-c", "true"],
    )


async def test_the_ladder_climbs_a_cargo_workspace_with_the_rust_toolchain(project: Path) -> None:
    write(project, "app/src/lib.rs", _APP.replace("(1), 4)", "(1), 5)"))
    result = await climb_one(project, "test.scoped")
    assert result.state == "red", result.reason
    assert result.tool == "cargo test"
    assert [d.message.split(": ")[0] for d in result.diagnostics] == ["tests::quadruples"]
    write(project, "app/src/lib.rs", _APP)


async def test_cargo_output_is_never_part_of_the_change(project: Path) -> None:
    await anyio.run_process(["cargo", "build", "--quiet", "--offline", "-p", "app"], cwd=project)
    assert (project / "target").is_dir()
    # Without git (no .gitignore to lean on), the snapshot walks the folder.
    plain = project.parent / "plain"
    shutil.copytree(project, plain, ignore=shutil.ignore_patterns(".git"))
    touched = snapshot_of(plain).touched
    assert "app/src/lib.rs" in touched
    assert not [p for p in touched if p.startswith("target/")]


async def test_the_crate_graph_is_cargo_metadata_again_only_when_a_manifest_changed(
    project: Path,
) -> None:
    write(project, "app/src/lib.rs", _APP + "// touched\n")
    first = await RUNNERS["test.scoped"](_ctx(project, "g1"))
    assert first.state == "green", first.reason
    assert not any("crate graph:" in n for n in first.notes)
    again = await RUNNERS["test.scoped"](_ctx(project, "g2"))
    assert any("cargo metadata of climb g1" in n for n in again.notes)
    # A new member (the workspace manifest and the crate's own are touched): asked again.
    # The manifest names no resolver: cargo warns on stderr beside the JSON it prints.
    write(project, "Cargo.toml", '[workspace]\nmembers = ["basis", "app", "legacy", "extra"]\n')
    write(project, "legacy/src/lib.rs", _LIB.replace("let kept", "let _kept"))
    write(project, "extra/Cargo.toml", _MANIFEST_EXTRA)
    write(project, "extra/src/lib.rs", "#[test]\nfn extra_runs() {}\n")
    grown = await RUNNERS["test.scoped"](_ctx(project, "g3"))
    assert grown.state == "green", grown.reason
    assert not any("crate graph:" in n for n in grown.notes)
    assert "extra" in grown.command


_MANIFEST_EXTRA = _manifest("extra")
