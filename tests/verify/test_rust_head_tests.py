"""Red means the change did it, for Rust tests too: a test that already fails at HEAD and
still fails is listed as already failing at HEAD, not red; a test the change broke is red.
Real cargo and libtest on a crate made here, its HEAD in git."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.toolchains.rust.runners import RUNNERS
from git_tree import commit_tree, write
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
