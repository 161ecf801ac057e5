"""The Rust rungs' preamble without cargo: skipped, naming what is missing (the ladder is
then `incomplete`), and a clean tree gives them no work."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.layout import Layout
from agent_habitat.verify.models import RungName
from agent_habitat.verify.rungs.context import NOTHING_CHANGED, RungContext
from agent_habitat.verify.snapshot import Snapshot
from agent_habitat.verify.toolchains.rust.cargo import NO_CARGO
from agent_habitat.verify.toolchains.rust.runners import RUNNERS
from agent_habitat.workspace import Workspace

pytestmark = pytest.mark.anyio


def _ctx(root: Path, touched: list[str]) -> RungContext:
    (root / "Cargo.toml").write_text('[package]\nname = "x"\n', encoding="utf-8")
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "lib.rs").write_text("pub fn x() {}\n", encoding="utf-8")
    return RungContext(
        root=root,
        workspace=Workspace.for_project(root),
        config=LadderConfig(),
        policy="standard",
        ladder_id="p1",
        snapshot=Snapshot(id="s", head=None, hashes={}),
        touched=touched,
        layout=Layout(root=root, packages={}, test_roots=[], is_python=False),
        env=None,
    )


@pytest.mark.parametrize("rung", ["diagnose.files", "compile.project", "test.scoped", "test.full"])
async def test_without_cargo_a_rung_is_skipped_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rung: RungName
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    result = await RUNNERS[rung](_ctx(tmp_path, ["src/lib.rs"]))
    assert (result.state, result.missing, result.reason) == ("skipped", "cargo", NO_CARGO)


@pytest.mark.parametrize("rung", ["diagnose.files", "compile.project", "test.scoped"])
async def test_a_clean_tree_gives_the_rust_rungs_no_work(tmp_path: Path, rung: RungName) -> None:
    result = await RUNNERS[rung](_ctx(tmp_path, []))
    assert (result.state, result.reason) == ("skipped", NOTHING_CHANGED)


async def test_touched_files_that_are_not_rust_give_diagnose_no_work(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("hi\n", encoding="utf-8")
    result = await RUNNERS["diagnose.files"](_ctx(tmp_path, ["README.md"]))
    assert result.state == "skipped"
    assert result.reason == "no Rust files among the 1 touched files"
