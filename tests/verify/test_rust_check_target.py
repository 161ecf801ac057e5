"""clippy in the habitat's own target folder, the tests in the project's (toolchains/rust/
rungs.py, tests.py) on real crates made here: real cargo, clippy and libtest. Skipped only
where cargo or clippy is not installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, run_ladder
from agent_habitat.verify.models import RungName, RungResult
from agent_habitat.verify.rungs.context import RungContext
from agent_habitat.verify.toolchains.rust.cargo import check_target_dir
from agent_habitat.verify.toolchains.rust.runners import RUNNERS
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
#[cfg(test)]
mod tests {
    #[test]
    fn doubles() {
        assert_eq!(super::double(2), 4);
    }
}
"""
_STANDARD: tuple[RungName, ...] = ("diagnose.files", "compile.project", "test.scoped")


def _crate(root: Path, lib: str = _LIB) -> Path:
    manifest = '[package]\nname = "fz"\nversion = "0.1.0"\nedition = "2021"\n'
    return commit_tree(
        root, {"Cargo.toml": manifest, "src/lib.rs": lib, ".gitignore": "target/\nCargo.lock\n"}
    )


def _ctx(root: Path, ladder_id: str, rungs: tuple[RungName, ...] = _STANDARD) -> RungContext:
    return tree_ctx(root, ladder_id, rungs=rungs)


async def _climb(ctx: RungContext) -> dict[RungName, object]:
    out: dict[RungName, object] = {}
    for rung in ctx.rungs:
        out[rung] = result = await RUNNERS[rung](ctx)
        if result.state != "green":
            break
    return out


def _test_units(output: str) -> list[dict[str, Any]]:
    return [
        message
        for line in output.splitlines()
        if line.startswith("{")
        and (message := json.loads(line)).get("reason") == "compiler-artifact"
        and message["profile"]["test"]
    ]


async def test_clippy_checks_apart_and_the_users_cargo_test_finds_the_verdicts_build(
    tmp_path: Path,
) -> None:
    root = _crate(tmp_path / "fz")
    write(root, "src/lib.rs", _LIB.replace("x * 2", "x * 3") + "pub fn n(v: &Vec<u8>) {}\n")
    ctx = _ctx(root, "f1")
    lint = await RUNNERS["diagnose.files"](ctx)
    assert lint.state == "green", lint.reason
    assert lint.command[:2] == ["cargo", "clippy"]
    assert "--all-targets" in lint.command
    # clippy's own lint (ptr_arg), a warning on the touched file, as cargo clippy gives it.
    assert "clippy::ptr_arg" in {d.code for d in lint.diagnostics}
    # In the habitat's target folder, not the project's: the tests never wait for its lock.
    assert (check_target_dir(ctx) / "debug").is_dir()
    assert not (root / "target").exists()
    check = await RUNNERS["compile.project"](ctx)
    assert (check.state, check.duration_s) == ("green", 0.0)
    assert any("not checked twice" in n for n in check.notes)
    tests = await RUNNERS["test.scoped"](ctx)
    assert tests.state == "red", tests.reason  # x * 3 fails `doubles`
    assert [d.message.split(": ")[0] for d in tests.diagnostics] == ["tests::doubles"]
    assert _test_units(tests.output), tests.output[-2000:]
    # The user's own cargo test after the verdict builds nothing: the same units.
    after = subprocess.run(
        ["cargo", "test", "--no-run", "--message-format=json"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    units = _test_units(after.stdout)
    assert units
    assert all(unit["fresh"] for unit in units), after.stdout[-2000:]


async def test_without_test_scoped_in_the_climb_clippy_is_cargo_clippy(tmp_path: Path) -> None:
    root = _crate(tmp_path / "fz")
    write(root, "src/lib.rs", _LIB + "// touched\n")
    lint = await RUNNERS["diagnose.files"](_ctx(root, "f2", ("diagnose.files",)))
    assert lint.state == "green", lint.reason
    assert lint.command[:2] == ["cargo", "clippy"]


async def test_a_denied_clippy_lint_is_red_in_diagnose_files_at_its_line(tmp_path: Path) -> None:
    root = _crate(tmp_path / "fz", "#![deny(clippy::ptr_arg)]\n" + _LIB)
    write(root, "src/lib.rs", "#![deny(clippy::ptr_arg)]\n" + _LIB + "pub fn n(v: &Vec<u8>) {}\n")
    lint = await RUNNERS["diagnose.files"](_ctx(root, "f3"))
    assert lint.state == "red", lint.reason
    assert lint.command[:2] == ["cargo", "clippy"]
    assert [(d.file, d.line, d.code) for d in lint.diagnostics if d.severity == "error"] == [
        ("src/lib.rs", len(_LIB.splitlines()) + 2, "clippy::ptr_arg")
    ]


async def test_a_denied_lint_already_at_head_never_stops_the_tests(tmp_path: Path) -> None:
    # HEAD has a clippy error the project denies: clippy's check is red at HEAD too, and the
    # tests, built as rustc builds them, fail only for what the change did.
    lib = "#![deny(clippy::ptr_arg)]\npub fn n(v: &Vec<u8>) -> usize {\n    v.len()\n}\n" + _LIB
    root = _crate(tmp_path / "fz", lib)
    write(root, "src/lib.rs", lib.replace("x * 2", "x * 3"))
    ctx = _ctx(root, "f4")
    lint = await RUNNERS["diagnose.files"](ctx)
    assert lint.state == "green", lint.reason  # the lint error is HEAD's
    assert lint.preexisting_findings >= 1
    tests = await RUNNERS["test.scoped"](ctx)
    assert tests.state == "red", tests.reason
    assert [d.message.split(": ")[0] for d in tests.diagnostics] == ["tests::doubles"]


async def test_code_that_names_clippy_in_a_cfg_is_tested_as_rustc_builds_it(
    tmp_path: Path,
) -> None:
    lib = _LIB + '#[cfg(not(clippy))]\npub fn only_rustc() -> &\'static str {\n    "r"\n}\n'
    lib += '#[test]\nfn rustc_built() {\n    assert_eq!(only_rustc(), "r");\n}\n'
    root = _crate(tmp_path / "fz", lib)
    write(root, "src/lib.rs", lib + "// touched\n")
    ctx = _ctx(root, "f5")
    lint = await RUNNERS["diagnose.files"](ctx)
    assert lint.state == "green", lint.reason
    tests = await RUNNERS["test.scoped"](ctx)
    assert tests.state == "green", tests.reason
    assert "2 passed, 0 failed" in tests.notes


async def test_a_workspace_climb_checks_the_reached_crates_once_for_clippy_and_check(
    tmp_path: Path,
) -> None:
    # basis is touched, app depends on it: clippy takes both in one cargo run, so
    # compile.project checks nothing again.
    app = "pub fn quad(x: u64) -> u64 {\n    fz::double(fz::double(x))\n}\n"
    app += "#[test]\nfn quads() {\n    assert_eq!(quad(1), 4);\n}\n"
    member = '[package]\nname = "{}"\nversion = "0.1.0"\nedition = "2021"\n'
    root = commit_tree(
        tmp_path / "ws",
        {
            "Cargo.toml": '[workspace]\nmembers = ["fz", "app"]\nresolver = "2"\n',
            "fz/Cargo.toml": member.format("fz"),
            "fz/src/lib.rs": _LIB,
            "app/Cargo.toml": member.format("app") + '[dependencies]\nfz = { path = "../fz" }\n',
            "app/src/lib.rs": app,
            ".gitignore": "target/\nCargo.lock\n",
        },
    )
    write(root, "fz/src/lib.rs", _LIB.replace("x * 2", "x * 3"))
    ctx = _ctx(root, "f6")
    lint = await RUNNERS["diagnose.files"](ctx)
    assert lint.state == "green", lint.reason
    assert lint.command[:2] == ["cargo", "clippy"]
    assert lint.command[-4:] == ["-p", "app", "-p", "fz"]
    check = await RUNNERS["compile.project"](ctx)
    assert (check.state, check.duration_s) == ("green", 0.0)
    tests = await RUNNERS["test.scoped"](ctx)
    assert tests.state == "red", tests.reason
    assert {d.message.split(": ")[0] for d in tests.diagnostics} == {"tests::doubles", "quads"}


async def test_a_change_inside_the_test_module_runs_the_unit_tests_alone(tmp_path: Path) -> None:
    # No doc test or integration test links #[cfg(test)] code: they are not run for it.
    lib = "/// ```\n/// assert_eq!(fz::double(2), 4);\n/// ```\n" + _LIB
    root = commit_tree(
        tmp_path / "fz",
        {
            "Cargo.toml": '[package]\nname = "fz"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": lib,
            "tests/api.rs": "#[test]\nfn api() {\n    assert_eq!(fz::double(1), 2);\n}\n",
            ".gitignore": "target/\nCargo.lock\n",
        },
    )
    write(root, "src/lib.rs", lib.replace("double(2), 4);\n    }", "double(2), 5);\n    }"))
    ctx = _ctx(root, "f7")
    climbed = await _climb(ctx)
    tests = climbed["test.scoped"]
    assert isinstance(tests, RungResult)
    assert tests.state == "red", tests.reason
    assert tests.command[-3:] == ["-p", "fz", "--lib"]
    assert "0 passed, 1 failed" in tests.notes  # the doc test and tests/api.rs did not run
    assert ctx.selection.tests == ["src/lib.rs"]
    assert any("only in #[cfg(test)] modules" in r for r in ctx.selection.reasons)
    # The same edit plus one in the code: every test of the crate.
    write(
        root,
        "src/lib.rs",
        lib.replace("2), 4);\n    }", "2), 5);\n    }").replace("x * 2", "x + x"),
    )
    again = await RUNNERS["test.scoped"](_ctx(root, "f8"))
    assert again.command[-2:] == ["-p", "fz"]
    assert "2 passed, 1 failed" in again.notes


async def test_a_compile_error_is_judged_by_the_crates_own_check_on_both_sides(
    tmp_path: Path,
) -> None:
    # HEAD's answer is not cached: the crates' own check (lib_check.py) runs on the tree and
    # on HEAD from the tree's first error, and a new error there is red at once. HEAD's
    # answer is cached for the next.
    root = _crate(tmp_path / "fz")
    # The lock file a user's first build leaves (HEAD's export copies it, as its key reads).
    subprocess.run(["cargo", "generate-lockfile"], cwd=root, check=True, capture_output=True)
    write(root, "src/lib.rs", _LIB.replace("x * 2", "x * true"))
    lint = await RUNNERS["diagnose.files"](_ctx(root, "f9"))
    assert lint.state == "red", lint.reason
    assert (lint.new_findings, lint.preexisting_findings) == (1, 0), lint.diagnostics
    assert (lint.baseline or "").startswith("HEAD "), lint.baseline
    assert not (lint.baseline or "").endswith("(cached)"), lint.baseline
    assert any("judged by `cargo check" in n for n in lint.notes), lint.notes
    write(root, "src/lib.rs", _LIB.replace("x * 2", 'x * "2"'))
    again = await RUNNERS["diagnose.files"](_ctx(root, "f10"))
    assert again.state == "red", again.reason
    assert (again.baseline or "").endswith("(cached)"), again.baseline


async def test_the_tests_start_beside_clippy_and_a_red_clippy_stops_them(tmp_path: Path) -> None:
    root = _crate(tmp_path / "fz")
    write(root, "src/lib.rs", _LIB.replace("x * 2", "x * 3"))
    climbed = await run_ladder(root, LadderRequest(), bus=InMemoryEventBus("t"))
    states = {r.rung: r.state for r in climbed.rungs}
    assert states == {
        "diagnose.files": "green",
        "compile.project": "green",
        "test.scoped": "red",
    }, climbed.rungs
    tests = climbed.rungs[-1]
    assert any("started beside diagnose.files" in n for n in tests.notes), tests.notes
    # A compile error: clippy and the tests' own build both see it. Whichever says it first
    # ends the climb red (ahead.RedBeside); the other is stopped, never reported green.
    write(root, "src/lib.rs", _LIB.replace("x * 2", "x * true"))
    stopped = await run_ladder(root, LadderRequest(), bus=InMemoryEventBus("t"))
    order = [(r.rung, r.state) for r in stopped.rungs]
    red = [r for r in stopped.rungs if r.state == "red"]
    assert len(red) == 1, stopped.rungs
    assert [d.code for d in red[0].diagnostics] == ["E0277"], red[0]
    if red[0].rung == "diagnose.files":
        assert order[1:] == [("compile.project", "skipped"), ("test.scoped", "skipped")]
        assert stopped.rungs[-1].reason == "not reached: diagnose.files is red"
    else:
        assert order == [
            ("diagnose.files", "cancelled"),
            ("compile.project", "cancelled"),
            ("test.scoped", "red"),
        ]
        assert stopped.rungs[0].reason == "stopped: test.scoped is red"
