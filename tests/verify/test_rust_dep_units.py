"""HEAD's builds take the registry dependencies the user's `target/` built (dep_units.py):
cargo finds them fresh, the workspace's own crates are never taken, and a unit is taken only
whole. Real cargo, offline: the dependency comes from a directory source that stands in for
crates.io (Cargo.lock names it a registry package, as a vendored crate is), at one absolute
path, as `~/.cargo/registry` is for every checkout of a project."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_habitat.verify.toolchains.rust.cargo import head_target_dir
from agent_habitat.verify.toolchains.rust.dep_units import (
    RUSTC_INFO,
    registry_packages,
    seed,
    seed_rustc_info,
)
from agent_habitat.verify.toolchains.rust.runners import RUNNERS
from git_tree import commit_tree, write
from ladder_runs import tree_ctx

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed here"),
]

# A dependency with a build script whose output its library includes: a unit that compiles
# (the library), one that builds the script and one that runs it (its OUT_DIR).
_TINY_BUILD = """use std::{env, fs, path::Path};
fn main() {
    let out = env::var("OUT_DIR").unwrap();
    fs::write(Path::new(&out).join("gen.rs"), "pub fn one() -> u32 { 1 }").unwrap();
}
"""
_APP = """pub fn two() -> u32 {
    tiny::one() * 2
}
#[cfg(test)]
mod tests {
    #[test]
    fn doubles() {
        assert_eq!(super::two(), 2);
    }
}
"""


def _cargo(root: Path, *args: str, target: Path | None = None) -> str:
    env = {**os.environ, "CARGO_TARGET_DIR": str(target or root / "target")}
    done = subprocess.run(
        ["cargo", *args], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """A crate depending on `tiny` (a registry package, vendored), committed, built by its
    user (`cargo test --no-run` in its `target/`)."""
    vendor = tmp_path / "vendor" / "tiny"
    write(vendor, "Cargo.toml", '[package]\nname = "tiny"\nversion = "1.0.0"\nedition = "2021"\n')
    write(vendor, "build.rs", _TINY_BUILD)
    write(vendor, "src/lib.rs", 'include!(concat!(env!("OUT_DIR"), "/gen.rs"));\n')
    write(vendor, ".cargo-checksum.json", '{"files":{},"package":null}')
    config = (
        f'[source.crates-io]\nreplace-with = "here"\n[source.here]\ndirectory = "{vendor.parent}"\n'
    )
    manifest = (
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n[dependencies]\ntiny = "1"\n'
    )
    root = tmp_path / "app"
    write(root, "Cargo.toml", manifest)
    write(root, "src/lib.rs", _APP)
    write(root, ".cargo/config.toml", config)
    write(root, ".gitignore", "target/\n")
    _cargo(root, "generate-lockfile", "--offline")
    commit_tree(root, {})
    _cargo(root, "test", "--no-run", "--offline")
    return root


def _units(profile: Path) -> set[str]:
    return {p.name for p in (profile / ".fingerprint").iterdir()}


def test_the_users_dependency_units_are_copied_and_cargo_finds_them_fresh(
    app: Path, tmp_path: Path
) -> None:
    packages = registry_packages(app / "Cargo.lock", {"app"})
    assert packages == {"tiny"}
    dest = tmp_path / "head-target"
    assert seed(dest / "debug", [app / "target" / "debug"], packages) == 3
    mine = _units(app / "target" / "debug")
    assert _units(dest / "debug") == {u for u in mine if u.startswith("tiny-")}
    # The same crate elsewhere (HEAD's export) builds in that folder: tiny is fresh there.
    export = tmp_path / "export"
    shutil.copytree(app, export, ignore=shutil.ignore_patterns("target", ".git"))
    said = _cargo(export, "test", "--no-run", "--offline", "-v", target=dest)
    assert "Fresh tiny" in said, said
    assert "Compiling tiny" not in said, said
    assert "Compiling app" in said, said
    # Nothing left to copy: a second seeding copies nothing.
    assert seed(dest / "debug", [app / "target" / "debug"], packages) == 0


def _rustc_cache(root: Path, target: Path) -> str:
    """What cargo's log says of its cache of the compiler's answers in `target`."""
    env = {**os.environ, "CARGO_TARGET_DIR": str(target), "CARGO_LOG": "cargo::util::rustc=debug"}
    done = subprocess.run(
        ["cargo", "check", "--offline"], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_a_new_target_folder_takes_the_users_answers_of_the_compiler(
    app: Path, tmp_path: Path
) -> None:
    # Without them, cargo asks rustc again (`rustc -vV` and `--print`) before compiling.
    assert "rustc info cache miss" in _rustc_cache(app, tmp_path / "bare")
    dest = tmp_path / "head-target"
    assert seed_rustc_info(dest, [tmp_path / "nowhere", app / "target"])
    assert (dest / RUSTC_INFO).read_bytes() == (app / "target" / RUSTC_INFO).read_bytes()
    said = _rustc_cache(app, dest)
    assert "rustc info cache hit" in said, said
    assert "rustc info cache miss" not in said, said
    # A folder with its own is left as it is.
    (dest / RUSTC_INFO).write_text("{}", encoding="utf-8")
    assert not seed_rustc_info(dest, [app / "target"])
    assert (dest / RUSTC_INFO).read_text(encoding="utf-8") == "{}"
    assert not seed_rustc_info(tmp_path / "other", [tmp_path / "nowhere"])
    assert not (tmp_path / "other").exists()


def test_a_checks_folder_takes_the_build_scripts_not_the_libraries_built_for_linking(
    app: Path, tmp_path: Path
) -> None:
    # A check compiles no dependency for linking (its own units hold their metadata), but it
    # does build and run their build scripts: those two units are copied, tiny's rlib not.
    dest = tmp_path / "check-target" / "debug"
    assert seed(dest, [app / "target" / "debug"], {"tiny"}, linked=False) == 2
    assert not list((dest / "deps").glob("*.rlib"))
    export = tmp_path / "export"
    shutil.copytree(app, export, ignore=shutil.ignore_patterns("target", ".git"))
    said = _cargo(export, "check", "--offline", "-v", target=dest.parent)
    assert "Checking tiny" in said, said
    assert "Compiling tiny" not in said, said  # its build script: fresh, copied
    assert "build-script-build" not in said, said  # nor run again


def test_a_users_own_check_of_the_dependencies_serves_the_checks_folder(
    app: Path, tmp_path: Path
) -> None:
    # No `cargo test` builds a dependency's check unit (clippy's from nothing: textwrap's
    # dev-dependencies, 76 s); a user who ran `cargo check` (or clippy) has them, and the
    # tree's clippy and check then find them fresh: the metadata-only unit is copied too.
    _cargo(app, "check", "--offline")
    dest = tmp_path / "check-target" / "debug"
    assert seed(dest, [app / "target" / "debug"], {"tiny"}, linked=False) == 3
    assert not list((dest / "deps").glob("*.rlib"))
    assert list((dest / "deps").glob("libtiny-*.rmeta"))
    export = tmp_path / "export"
    shutil.copytree(app, export, ignore=shutil.ignore_patterns("target", ".git"))
    said = _cargo(export, "check", "--offline", "-v", target=dest.parent)
    assert "Fresh tiny" in said, said
    assert "Checking tiny" not in said, said
    assert "Checking app" in said, said


def test_a_workspace_crates_name_is_never_a_dependency_to_copy(tmp_path: Path) -> None:
    lock = tmp_path / "Cargo.lock"
    lock.write_text(
        'version = 4\n\n[[package]]\nname = "app"\nversion = "0.1.0"\n\n'
        '[[package]]\nname = "app"\nversion = "0.0.9"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n\n'
        '[[package]]\nname = "tiny"\nversion = "1.0.0"\n'
        'source = "git+https://example.com/tiny#abc"\n',
        encoding="utf-8",
    )
    # app 0.0.9 from crates.io shares the workspace crate's name: its units cannot be told
    # from the workspace's own in a target folder, so neither is taken.
    assert registry_packages(lock, {"app"}) == {"tiny"}
    assert registry_packages(tmp_path / "absent.lock", {"app"}) == frozenset()


def test_a_unit_whose_outputs_are_newer_than_its_fingerprint_is_not_copied(
    app: Path, tmp_path: Path
) -> None:
    # cargo writes a unit's fingerprint after its outputs: an output newer than it is a
    # build at work there (or one that did not finish), and the unit is left out whole.
    user = app / "target" / "debug"
    (rlib,) = (user / "deps").glob("libtiny-*.rlib")
    later = rlib.stat().st_mtime + 60
    os.utime(rlib, (later, later))
    dest = tmp_path / "head-target" / "debug"
    assert seed(dest, [user], {"tiny"}) == 2  # the build script's two units
    unit = rlib.name.removeprefix("lib").removesuffix(".rlib")
    assert unit not in _units(dest)


def test_nothing_is_copied_while_a_cargo_holds_the_folder(app: Path, tmp_path: Path) -> None:
    dest = tmp_path / "head-target" / "debug"
    dest.mkdir(parents=True)
    with (dest / ".cargo-lock").open("w", encoding="utf-8") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as cargo holds it for a build there
        assert seed(dest, [app / "target" / "debug"], {"tiny"}, wait_s=0.2) == 0
        assert not (dest / ".fingerprint").exists()
    assert seed(dest, [app / "target" / "debug"], {"tiny"}, wait_s=0.2) == 3


async def test_heads_test_build_compiles_the_crate_alone(app: Path) -> None:
    # A red test: HEAD's build of the failed test's target (beside the tests, then its run)
    # finds tiny's units the user built, copied into HEAD's target folder.
    write(app, "src/lib.rs", _APP.replace("* 2", "* 3"))
    ctx = tree_ctx(app, "d1")
    result = await RUNNERS["test.scoped"](ctx)
    assert result.state == "red", result.reason
    assert result.new_findings == 1, result.diagnostics
    # (HEAD's check of the crate's own code, started beside the tests, checked tiny too:
    # a check's unit of its own, which no `cargo test` builds.)
    head = head_target_dir(ctx) / "debug"
    assert {u for u in _units(app / "target" / "debug") if u.startswith("tiny-")} <= _units(head)
    said = "".join(
        ctx.spool("test.scoped", suffix).read_text(encoding="utf-8")
        for suffix in (".head-build.out", ".head-ahead.out", ".head-tests.out")
        if ctx.spool("test.scoped", suffix).exists()
    )
    assert "Compiling app" in said, said
    assert "Compiling tiny" not in said, said
