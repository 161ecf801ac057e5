"""A Cargo project's warm-up (toolchains/rust/warm.py) on a real crate made here: real cargo,
clippy and libtest. Skipped only where cargo or clippy is not installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.testing import eventually
from agent_habitat.verify.runner import warmup
from agent_habitat.verify.select.memo import SelectionMemo
from agent_habitat.verify.toolchains.rust.cargo import head_target_dir
from agent_habitat.verify.toolchains.rust.runners import RUNNERS
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

_LIB = "pub fn double(x: u64) -> u64 {\n    x * 2\n}\n"
_LIB += "#[test]\nfn doubles() {\n    assert_eq!(double(2), 4);\n}\n"


async def test_the_warm_up_builds_heads_check_and_tests_and_waits_for_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "true")
    manifest = '[package]\nname = "wz"\nversion = "0.1.0"\nedition = "2021"\n'
    root = commit_tree(
        tmp_path / "wz",
        {"Cargo.toml": manifest, "src/lib.rs": _LIB, ".gitignore": "target/\nCargo.lock\n"},
    )
    subprocess.run(["cargo", "generate-lockfile"], cwd=root, check=True, capture_output=True)
    workspace = Workspace.for_project(root).ensure()
    trusted = anyio.Event()

    async def trust() -> None:
        await trusted.wait()

    up = warmup.WarmUp(
        root,
        workspace=workspace,
        bus=InMemoryEventBus(str(root)),
        memo=SelectionMemo(),
        trusted=trust,
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(up.run)
        await eventually(lambda: up.waiting_for_trust, within=30)
        # Nothing of the project ran before its user trusted it: no build anywhere.
        assert not head_target_dir(tree_ctx(root, "w0")).exists()
        assert not (root / "target").exists()
        trusted.set()
        with anyio.fail_after(300):
            await up.wait()
    item = up.items["lint_baseline"]
    assert item.state == "warm", item.detail
    assert "HEAD's cargo check --lib --bins (0 errors)" in item.detail
    assert "HEAD's cargo clippy" in item.detail
    assert "HEAD's test build" in item.detail
    assert "HEAD's tests (1 outcomes kept)" in item.detail
    assert up.items["pytest"].state == "skipped"
    assert not (root / "target").exists()  # the project's own folder is the user's
    # A compile error at that HEAD finds HEAD's answer cached: no check of HEAD runs.
    write(root, "src/lib.rs", _LIB.replace("x * 2", "x * true"))
    lint = await RUNNERS["diagnose.files"](tree_ctx(root, "w1", rungs=("diagnose.files",)))
    assert lint.state == "red", lint.reason
    assert (lint.baseline or "").endswith("(cached)"), lint.baseline
    # A failed test there: HEAD's outcome of it is the warm-up's, nothing runs on HEAD.
    write(root, "src/lib.rs", _LIB.replace("x * 2", "x * 3"))
    ctx = tree_ctx(root, "w2", rungs=("test.scoped",))
    tests = await RUNNERS["test.scoped"](ctx)
    assert tests.state == "red", tests.reason
    assert (tests.new_findings, tests.preexisting_findings) == (1, 0)
    assert (tests.baseline or "").endswith("(cached)"), tests.baseline
    assert not ctx.spool("test.scoped", ".head-build.out").exists()
    assert not ctx.spool("test.scoped", ".head-tests.out").exists()
    assert not ctx.spool("test.scoped", ".head-ahead.out").exists()
    # A compile error the tests' build meets: HEAD's check of the crate's own code that
    # judges it is the warm-up's, nothing compiles on HEAD.
    write(root, "src/lib.rs", _LIB.replace("x * 2", "x * false"))
    ctx = tree_ctx(root, "w3", rungs=("test.scoped",))
    tests = await RUNNERS["test.scoped"](ctx)
    assert tests.state == "red", tests.reason
    assert [(d.code, d.preexisting) for d in tests.diagnostics] == [("E0277", False)]
    assert (tests.baseline or "").endswith("(cached)"), tests.baseline
    assert not ctx.spool("test.scoped", ".lib.base.out").exists()
    assert not ctx.spool("test.scoped", ".built.out").exists()
