"""A red run's failed tests are asked of HEAD while the run goes on (head_ahead.py): a doc
test that failed early is answered by HEAD before the run ends, and the rung's own ask at
the end has nothing left to run. Real cargo, libtest and rustdoc on a crate made here."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from agent_habitat.verify.models import RungResult
from agent_habitat.verify.toolchains.rust.messages import failed_so_far
from agent_habitat.verify.toolchains.rust.runners import RUNNERS
from git_tree import commit_tree, write
from ladder_runs import tree_ctx

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed here"),
]

# `waits`'s doc test holds the run until the file GATE names exists (a bound of 300 s), so
# the run is still going when `double`'s doc test, which the change breaks, has failed.
_LIB = """/// Twice `x`.
///
/// ```
/// assert_eq!(gated::double(2), 4);
/// ```
pub fn double(x: u32) -> u32 {
    x * 2
}

/// Holds until the gate opens.
///
/// ```
/// gated::waits();
/// ```
pub fn waits() {
    let gate = std::env::var("GATED_GATE").expect("GATED_GATE names the gate file");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while !std::path::Path::new(&gate).exists() {
        assert!(std::time::Instant::now() < until, "the gate never opened");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
"""


async def _until(check: Callable[[], bool], bound_s: float = 240.0) -> None:
    with anyio.fail_after(bound_s):
        while not check():
            await anyio.sleep(0.1)


async def test_a_doc_test_that_failed_is_asked_of_head_before_the_run_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = tmp_path / "gate"
    monkeypatch.setenv("GATED_GATE", str(gate))
    manifest = '[package]\nname = "gated"\nversion = "0.1.0"\nedition = "2021"\n'
    files = {"Cargo.toml": manifest, "src/lib.rs": _LIB, ".gitignore": "target/\n"}
    root = commit_tree(tmp_path / "gated", files)
    write(root, "src/lib.rs", _LIB.replace("x * 2", "x * 3"))
    ctx = tree_ctx(root, "a1")
    ahead = ctx.spool("test.scoped", ".head-ahead.out")
    got: list[RungResult] = []

    async def rung() -> None:
        got.append(await RUNNERS["test.scoped"](ctx))

    async with anyio.create_task_group() as tg:
        tg.start_soon(rung)
        # HEAD's run of the failed doc test ends while the tree's run waits at the gate.
        await _until(lambda: "test result:" in _text(ahead))
        assert not got
        gate.touch()
    [result] = got
    assert result.state == "red", result.reason
    assert result.new_findings == 1, result.diagnostics
    [failed] = result.diagnostics
    assert failed.message.startswith("src/lib.rs - double (line 3)")
    batch = _text(ahead)
    assert "src/lib.rs - double (line 3) ... ok" in batch, batch
    assert "waits" not in batch, batch
    # The rung's own ask found HEAD's answer kept: nothing was run on HEAD after the run.
    assert (result.baseline or "").endswith("(cached)"), result.baseline
    assert not ctx.spool("test.scoped", ".head-tests.out").exists()


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def test_the_failures_said_so_far_with_the_arguments_of_their_target() -> None:
    doc = {"gated": "-p gated --doc"}.get
    text = "\n".join(
        [
            "     Running unittests src/lib.rs (target/debug/deps/gated-0123456789abcdef)",
            "test tests::one ... FAILED",
            "test tests::two ... ok",
            "error: test failed, to rerun pass `-p gated --lib`",
            "     Running tests/api.rs (target/debug/deps/api-0123456789abcdef)",
            "test under_way ... FAILED",
        ]
    )
    # A binary still running: its target's arguments are not said yet.
    assert failed_so_far(text, doc) == {"tests::one": "-p gated --lib"}
    text += "\n" + "\n".join(
        [
            "error: test failed, to rerun pass `-p gated --test api`",
            "   Doc-tests gated",
            "test src/lib.rs - double (line 3) ... FAILED",
            "test src/lib.rs - waits (line 12) ... ok",
        ]
    )
    # Doc tests under way: cargo says their arguments only at the end; the crate tells them.
    assert failed_so_far(text, doc) == {
        "tests::one": "-p gated --lib",
        "under_way": "-p gated --test api",
        "src/lib.rs - double (line 3)": "-p gated --doc",
    }
    # A doc-tested crate not known: nothing of it until cargo says its arguments.
    assert "src/lib.rs - double (line 3)" not in failed_so_far(text, lambda name: None)
