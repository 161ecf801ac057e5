"""A file a crate reads through `include_str!` (its README as its doc, `#![doc =
include_str!(...)]`) reaches that crate's tests wherever the file lives: an edit to the
README runs the doc tests it holds. Real cargo on a workspace made here."""

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

_README = "# helper\n\n```\nassert_eq!(helper::one(), 1);\n```\n"
_GUIDE = "Guide.\n\n```\nassert_eq!(helper::one() + 1, 2);\n```\n"
_HELPER = """#![doc = include_str!("../../README.md")]
#[doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/guide.md"))]
pub fn one() -> u32 {
    1
}
"""


def _manifest(name: str) -> str:
    return f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n'


def _ctx(root: Path, ladder_id: str) -> RungContext:
    return tree_ctx(root, ladder_id)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    # The root is a package too (`top`), so its README and docs/ are top's files; the
    # member `helper` reads them.
    files = {
        "Cargo.toml": _manifest("top") + '\n[workspace]\nmembers = ["helper"]\nresolver = "2"\n',
        "src/lib.rs": "pub fn top() -> u32 {\n    0\n}\n",
        "README.md": _README,
        "docs/guide.md": _GUIDE,
        "helper/Cargo.toml": _manifest("helper"),
        "helper/src/lib.rs": _HELPER,
        ".gitignore": "target/\nCargo.lock\n",
    }
    return commit_tree(tmp_path / "ws", files)


@pytest.mark.parametrize(
    ("rel", "broken"),
    [("README.md", _README.replace("1);", "2);")), ("docs/guide.md", _GUIDE.replace("2);", "3);"))],
    ids=["literal-path", "manifest-dir"],
)
async def test_an_included_file_runs_the_doc_tests_of_the_crate_that_reads_it(
    workspace: Path, rel: str, broken: str
) -> None:
    write(workspace, rel, broken)
    ctx = _ctx(workspace, f"inc-{rel}")
    result = await RUNNERS["test.scoped"](ctx)
    assert result.state == "red", result.reason
    assert "helper" in result.command
    assert any(f"helper reads {rel}" in r for r in ctx.selection.reasons), ctx.selection.reasons
    assert [d.file for d in result.diagnostics if not d.preexisting] == ["helper/src/lib.rs"]
