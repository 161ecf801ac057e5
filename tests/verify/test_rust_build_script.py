"""A build script (`build.rs`) that fails: a build failure at the build script, with what it
said, in the test rung and the compiler rungs alike, never a test failure ("exit 101") nor
cargo failing to run. Real cargo, offline, a tiny workspace committed as HEAD. Skipped only
where cargo is not installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agent_habitat.verify.toolchains.rust.runners import RUNNERS
from git_tree import commit_tree, git, write
from ladder_runs import tree_ctx

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed here"),
]

_BUILD = 'fn main() {\n    println!("cargo:rerun-if-changed=build.rs");\n}\n'
_PANICS = (
    "fn main() {\n"
    '    println!("cargo:rerun-if-changed=build.rs");\n'
    '    panic!("no libfoo on this machine");\n'
    "}\n"
)
_EXITS = (
    "fn main() {\n"
    '    eprintln!("libfoo not found");\n'
    '    eprintln!("set FOO_DIR");\n'
    "    std::process::exit(3);\n"
    "}\n"
)
_LIB = "pub fn one() -> u32 {\n    1\n}\n"
_TESTS = "#[test]\nfn is_one() {\n    assert_eq!(basis::one(), 1);\n}\n"


def _manifest(name: str, extra: str = "") -> str:
    return f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n{extra}'


def _workspace(root: Path, build: str) -> Path:
    commit_tree(
        root,
        {
            "Cargo.toml": '[workspace]\nmembers = ["basis", "app"]\nresolver = "2"\n',
            "basis/Cargo.toml": _manifest("basis"),
            "basis/build.rs": build,
            "basis/src/lib.rs": _LIB,
            "basis/tests/api.rs": _TESTS,
            "app/Cargo.toml": _manifest("app", '\n[dependencies]\nbasis = { path = "../basis" }\n'),
            "app/src/lib.rs": "pub fn two() -> u32 {\n    basis::one() + 1\n}\n",
            ".gitignore": "target/\n",
        },
    )
    # A lock file, committed: the crates' own check on both sides reads the same one.
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=root, check=True)
    git(root, "add", "Cargo.lock")
    git(root, "commit", "-qm", "lock")
    return root


@pytest.fixture
def fine_at_head(tmp_path: Path) -> Path:
    return _workspace(tmp_path / "ws", _BUILD)


async def test_a_panicking_build_script_is_a_build_failure_at_its_panic(fine_at_head: Path) -> None:
    write(fine_at_head, "basis/build.rs", _PANICS)
    result = await RUNNERS["test.scoped"](tree_ctx(fine_at_head, "b1"))
    assert result.state == "red", result.reason
    assert (result.reason or "").startswith("build failure"), result.reason
    new = [d for d in result.diagnostics if not d.preexisting]
    assert [(d.file, d.line, d.code, d.severity) for d in new] == [
        ("basis/build.rs", 3, "build script", "error")
    ]
    assert "no libfoo on this machine" in new[0].message
    assert "basis" in new[0].message
    # Not a test binary that exited 101: no test ran.
    assert not any((d.code or "").startswith("exit") for d in result.diagnostics)
    assert "no libfoo on this machine" in (result.reason or "")


async def test_clippy_says_the_same_build_failure_not_that_cargo_failed(
    fine_at_head: Path,
) -> None:
    write(fine_at_head, "basis/build.rs", _PANICS)
    result = await RUNNERS["diagnose.files"](tree_ctx(fine_at_head, "b2"))
    assert result.state == "red", result.reason
    assert (result.reason or "").startswith("build failure"), result.reason
    assert [(d.file, d.line, d.code) for d in result.diagnostics if not d.preexisting] == [
        ("basis/build.rs", 3, "build script")
    ]


async def test_a_build_script_that_exits_is_a_build_failure_with_what_it_wrote(
    fine_at_head: Path,
) -> None:
    write(fine_at_head, "basis/build.rs", _EXITS)
    result = await RUNNERS["test.scoped"](tree_ctx(fine_at_head, "b3"))
    assert result.state == "red", result.reason
    (failure,) = [d for d in result.diagnostics if not d.preexisting]
    assert (failure.file, failure.code) == ("basis/build.rs", "build script")
    assert "exit 3" in failure.message
    assert "libfoo not found; set FOO_DIR" in failure.message


async def test_a_build_script_failing_at_head_too_is_not_the_changes_nor_green(
    tmp_path: Path,
) -> None:
    # HEAD's build script fails the same way: an edit elsewhere did not do it, and no test
    # could build on either side, so nothing was checked.
    root = _workspace(tmp_path / "ws", _EXITS)
    write(root, "basis/src/lib.rs", _LIB.replace("1\n", "1 // one\n"))
    result = await RUNNERS["test.scoped"](tree_ctx(root, "b4"))
    assert result.state not in ("red", "green"), result.reason
    assert [d.preexisting for d in result.diagnostics if d.code == "build script"] == [True]
    assert "build failure" in (result.reason or "")
