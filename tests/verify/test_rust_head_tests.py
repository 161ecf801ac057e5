"""Red means the change did it, for Rust tests too: a test that already fails at HEAD and
still fails is listed as already failing at HEAD, not red; a test the change broke is red.
Real cargo and libtest on a crate made here, its HEAD in git."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.toolchains.rust.cargo import head_target_dir
from agent_habitat.verify.toolchains.rust.head_tests import narrowed
from agent_habitat.verify.toolchains.rust.runners import RUNNERS
from git_tree import commit_tree, git, write
from ladder_runs import tree_ctx

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed here"),
]

_LIB = """/// Twice `x`.
///
/// ```
/// assert_eq!(shaky::twice(1), 3);
/// ```
pub fn twice(x: u32) -> u32 {
    x * 2
}
pub fn half(x: u32) -> u32 {
    x / 2
}
#[cfg(test)]
mod tests {
    #[test]
    fn halves() {
        assert_eq!(super::half(4), 2);
    }
    #[test]
    fn broken_since_long() {
        assert_eq!(super::twice(2), 5);
    }
}
"""


def _ctx(root: Path, ladder_id: str) -> RungContext:
    return tree_ctx(root, ladder_id)


def _head_runs(ctx: RungContext) -> str:
    """HEAD's runs of the failed tests: asked while the run went on (head_ahead.py) or at
    its end, whichever found them named first."""
    return "".join(
        path.read_text(encoding="utf-8")
        for suffix in (".head-ahead.out", ".head-ahead1.out", ".head-tests.out")
        if (path := ctx.spool("test.scoped", suffix)).exists()
    )


@pytest.fixture
def crate(tmp_path: Path) -> Path:
    manifest = '[package]\nname = "shaky"\nversion = "0.1.0"\nedition = "2021"\n'
    files = {"Cargo.toml": manifest, "src/lib.rs": _LIB, ".gitignore": "target/\nCargo.lock\n"}
    return commit_tree(tmp_path / "shaky", files)


async def test_tests_failing_at_head_and_still_failing_are_not_red(crate: Path) -> None:
    # A line above moves the doc test (its name carries its line): still the same test.
    write(crate, "src/lib.rs", "// Halves and doubles.\n" + _LIB)
    result = await RUNNERS["test.scoped"](_ctx(crate, "h1"))
    assert result.state == "green", result.reason
    assert (result.new_findings, result.preexisting_findings) == (0, 2)
    assert all(d.preexisting for d in result.diagnostics)
    assert "already failing at HEAD" in (result.reason or "")
    assert (result.baseline or "").startswith("HEAD ")


async def test_a_test_the_change_broke_is_red_beside_those_already_failing(crate: Path) -> None:
    write(crate, "src/lib.rs", _LIB.replace("x / 2", "x / 3"))
    result = await RUNNERS["test.scoped"](_ctx(crate, "h2"))
    assert result.state == "red", result.reason
    assert (result.new_findings, result.preexisting_findings) == (1, 2)
    new = [d.message.split(": ")[0] for d in result.diagnostics if not d.preexisting]
    assert new == ["tests::halves"]
    assert "already failing at HEAD" in (result.reason or "")
    # HEAD's outcomes of these tests are kept: the next red asks cargo nothing on HEAD.
    again = await RUNNERS["test.scoped"](_ctx(crate, "h3"))
    assert (again.state, again.new_findings, again.preexisting_findings) == ("red", 1, 2)
    assert "(cached)" in (again.baseline or "")


async def test_head_builds_its_tests_as_rustc_does_where_clippy_lints_are_denied(
    tmp_path: Path,
) -> None:
    # Warnings denied under cfg(test), and a clippy lint in the code (getopts does so): a
    # build through clippy-driver stops at it, here and on HEAD; rustc's build does not.
    lib = "#![cfg_attr(test, deny(warnings))]\npub fn n(v: &Vec<u8>) -> usize {\n    v.len()\n}\n"
    manifest = '[package]\nname = "shaky"\nversion = "0.1.0"\nedition = "2021"\n'
    files = {"Cargo.toml": manifest, "src/lib.rs": lib + _LIB, ".gitignore": "target/\n"}
    crate = commit_tree(tmp_path / "denies", files)
    write(crate, "src/lib.rs", lib + _LIB.replace("x / 2", "x / 2 // halved"))
    result = await RUNNERS["test.scoped"](_ctx(crate, "h4"))
    assert result.state == "green", result.reason
    assert (result.new_findings, result.preexisting_findings) == (0, 2)


def test_head_runs_only_the_failed_targets_filtered_to_the_failed_tests() -> None:
    runs = [["cargo", "test", "--message-format=json", "--no-fail-fast", "-p", "a", "-p", "b"]]
    reruns = [
        {
            "tests::halves": "-p a --lib",
            "src/lib.rs - Version::parse (line 12)": "-p a --doc",
            "src/lib.rs - (line 1)": "-p a --doc",
            "adds": "-p b --test api",
        }
    ]
    keys = ["adds", "src/lib.rs -", "src/lib.rs - Version::parse", "tests::halves"]
    base = ["cargo", "test", "--message-format=json", "--no-fail-fast"]
    assert narrowed(runs, reruns, keys) == [
        # rustdoc splits its filters at whitespace: a doc test's key gives its last word.
        [*base, "-p", "a", "--doc", "--", "Version::parse", "src/lib.rs"],
        [*base, "-p", "a", "--lib", "--", "tests::halves"],
        [*base, "-p", "b", "--test", "api", "--", "adds"],
    ]
    # A run's own target selection gives way to the failed target's.
    only_units = [[*base, "-p", "a", "--lib", "--bins"]]
    assert narrowed(only_units, [{"t": "--lib"}], ["t"]) == [[*base, "-p", "a", "--lib", "--", "t"]]
    # A failure whose target cargo did not name: HEAD runs the whole test set.
    assert narrowed(runs, reruns, ["adds", "elsewhere"]) is None


async def test_head_builds_and_runs_only_the_targets_that_failed(tmp_path: Path) -> None:
    manifest = '[package]\nname = "shaky"\nversion = "0.1.0"\nedition = "2021"\n'
    api = "#[test]\nfn zero() {\n    assert_eq!(shaky::twice(0), 0);\n}\n"
    files = {
        "Cargo.toml": manifest,
        "src/lib.rs": _LIB,
        "tests/api.rs": api,
        ".gitignore": "target/\nCargo.lock\n",
    }
    crate = commit_tree(tmp_path / "narrow", files)
    # halves breaks (the lib's tests); broken_since_long and the doc test failed at HEAD too;
    # tests/api.rs passes.
    write(crate, "src/lib.rs", _LIB.replace("x / 2", "x / 3"))
    ctx = _ctx(crate, "h5")
    result = await RUNNERS["test.scoped"](ctx)
    assert result.state == "red", result.reason
    new = [d.message.split(": ")[0] for d in result.diagnostics if not d.preexisting]
    assert (new, result.preexisting_findings) == (["tests::halves"], 2)
    # HEAD ran the lib's tests and its doc tests, not tests/api.rs (which HEAD's build
    # beside the tests built: prebuild_on_head): its outcomes are those of the failed tests.
    deps = head_target_dir(ctx) / "debug" / "deps"
    built = {p.name.rsplit("-", 1)[0] for p in deps.iterdir()}
    assert {"shaky", "api"} <= built, sorted(built)
    ran = _head_runs(ctx)
    assert "Running" in ran, ran
    assert "tests/api.rs" not in ran, ran
    assert "test zero ..." not in ran, ran


async def test_heads_test_build_runs_beside_the_tests_and_its_runs_only_run(
    crate: Path,
) -> None:
    # A red run's HEAD outcomes need HEAD's test binaries: their build started beside the
    # working tree's tests, so HEAD's runs of the failed tests compile nothing.
    write(crate, "src/lib.rs", _LIB.replace("x / 2", "x / 3"))
    ctx = _ctx(crate, "h8")
    result = await RUNNERS["test.scoped"](ctx)
    assert result.state == "red", result.reason
    assert (result.new_findings, result.preexisting_findings) == (1, 2)
    built = ctx.spool("test.scoped", ".head-build.out").read_text(encoding="utf-8")
    assert "Compiling shaky" in built, built
    ran = _head_runs(ctx)
    assert "Compiling" not in ran, ran
    assert "test tests::halves ... ok" in ran, ran
    # A green run needs nothing of HEAD: its build beside is cancelled, or was never
    # started again once it had finished at this HEAD.
    write(crate, "src/lib.rs", _LIB.replace("x / 2", "(x / 2)"))
    again = await RUNNERS["test.scoped"](_ctx(crate, "h9"))
    assert again.preexisting_findings == 2, again.reason


async def test_head_moved_to_an_older_commit_is_built_again(tmp_path: Path) -> None:
    # HEAD's folder is unpacked from git, and cargo calls a unit fresh when its sources are
    # older than its last build. A commit older than the last HEAD build (a branch switched
    # to, a reset) must not run the binary built for the other commit.
    manifest = '[package]\nname = "shaky"\nversion = "0.1.0"\nedition = "2021"\n'
    lib = _LIB.replace("assert_eq!(shaky::twice(1), 3)", "assert_eq!(shaky::twice(1), 2)")
    lib = lib.replace("assert_eq!(super::twice(2), 5)", "assert_eq!(super::twice(2), 4)")
    files = {"Cargo.toml": manifest, "src/lib.rs": lib, ".gitignore": "target/\nCargo.lock\n"}
    crate = tmp_path / "moved"
    for rel, text in files.items():
        write(crate, rel, text)
    git(crate, "init", "-q")
    git(crate, "add", "-A")
    old = "2020-01-01T00:00:00+00:00"  # git archive gives the files the commit's time
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "passing"],
        cwd=crate,
        check=True,
        env={**os.environ, "GIT_AUTHOR_DATE": old, "GIT_COMMITTER_DATE": old},
    )
    broken = lib.replace("x / 2", "x / 3")
    write(crate, "src/lib.rs", broken)
    git(crate, "commit", "-qam", "halves breaks")
    # At the newer commit, halves fails at HEAD too: HEAD's tests are built and run.
    write(crate, "src/lib.rs", "// a comment\n" + broken)
    result = await RUNNERS["test.scoped"](_ctx(crate, "h6"))
    assert result.state == "green", result.reason
    assert result.preexisting_findings == 1
    # Back to the older commit, where halves passes; the same edit breaks it: the change's.
    git(crate, "reset", "-q", "--hard", "HEAD~1")
    write(crate, "src/lib.rs", broken)
    result = await RUNNERS["test.scoped"](_ctx(crate, "h7"))
    assert result.state == "red", result.reason
    assert (result.new_findings, result.preexisting_findings) == (1, 0)


async def test_head_builds_its_tests_without_debug_info(tmp_path: Path) -> None:
    # cargo tells a build script whether its profile has debug info (DEBUG); this crate's
    # test asserts there is none, so it fails as the user builds and passes on HEAD, whose
    # binaries are run once for their outcomes (cargo.head_env: debug = 0).
    manifest = '[package]\nname = "dbg"\nversion = "0.1.0"\nedition = "2021"\n'
    build = (
        'fn main() {\n    println!("cargo:rustc-env=DEBUG_INFO={}", '
        'std::env::var("DEBUG").unwrap());\n}\n'
    )
    lib = (
        "pub fn one() -> u32 {\n    1\n}\n#[cfg(test)]\nmod tests {\n    #[test]\n"
        '    fn no_debug_info() {\n        assert_eq!(env!("DEBUG_INFO"), "false");\n    }\n}\n'
    )
    files = {
        "Cargo.toml": manifest,
        "build.rs": build,
        "src/lib.rs": lib,
        ".gitignore": "target/\n",
    }
    crate = commit_tree(tmp_path / "dbg", files)
    write(crate, "src/lib.rs", "// a comment\n" + lib)
    result = await RUNNERS["test.scoped"](_ctx(crate, "h8"))
    assert result.state == "red", result.reason
    assert (result.new_findings, result.preexisting_findings) == (1, 0)
