"""The crate graph from `cargo metadata`: which crates a change reaches and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_habitat.verify.toolchains.rust.detect import detect, owns
from agent_habitat.verify.toolchains.rust.metadata import CrateGraph, MetadataError, parse_metadata


def _package(
    root: Path, name: str, folder: str, deps: tuple[str, ...] = (), tests: tuple[str, ...] = ()
) -> dict[str, object]:
    base = root / folder
    return {
        "name": name,
        "id": f"path+file://{base}#0.1.0",
        "manifest_path": str(base / "Cargo.toml"),
        "dependencies": [{"name": d, "path": str(root / d), "kind": None} for d in deps]
        + [{"name": "serde", "path": None, "kind": None}],
        "targets": [{"kind": ["lib"], "name": name, "src_path": str(base / "src/lib.rs")}]
        + [{"kind": ["test"], "name": t, "src_path": str(base / f"tests/{t}.rs")} for t in tests],
    }


def _graph(root: Path) -> CrateGraph:
    packages = [
        _package(root, "base", "base", tests=("api", "props")),
        _package(root, "mid", "mid", deps=("base",)),
        _package(root, "top", "top", deps=("mid",)),
        _package(root, "alone", "alone"),
    ]
    text = json.dumps({"packages": packages, "workspace_members": [p["id"] for p in packages]})
    return parse_metadata(text, root)


def test_a_source_file_reaches_its_crate_and_every_crate_that_depends_on_it(tmp_path: Path) -> None:
    affected = _graph(tmp_path).affected(["base/src/parse.rs"])
    assert affected.crates == ["base", "mid", "top"]
    assert affected.only_tests == {}
    assert "top depends on mid" in affected.reasons


def test_a_leaf_crate_reaches_itself_alone(tmp_path: Path) -> None:
    assert _graph(tmp_path).affected(["top/src/lib.rs", "top/Cargo.toml"]).crates == ["top"]


def test_an_integration_test_file_reaches_its_own_target_only(tmp_path: Path) -> None:
    affected = _graph(tmp_path).affected(["base/tests/api.rs"])
    assert affected.crates == ["base"]
    assert affected.only_tests == {"base": ["api"]}


def test_shared_code_under_tests_reaches_every_integration_target_of_the_crate(
    tmp_path: Path,
) -> None:
    affected = _graph(tmp_path).affected(["base/tests/util/mod.rs"])
    assert affected.only_tests == {"base": ["api", "props"]}


def test_a_test_file_and_a_source_file_of_one_crate_run_its_whole_suite(tmp_path: Path) -> None:
    affected = _graph(tmp_path).affected(["base/tests/api.rs", "base/src/lib.rs"])
    assert affected.only_tests == {}
    assert affected.crates == ["base", "mid", "top"]


@pytest.mark.parametrize("rel", ["Cargo.lock", "Cargo.toml", ".cargo/config.toml", "rustfmt.toml"])
def test_workspace_wide_files_reach_every_crate(tmp_path: Path, rel: str) -> None:
    affected = _graph(tmp_path).affected([rel])
    assert affected.every
    assert affected.crates == ["alone", "base", "mid", "top"]


def test_a_crates_binaries_and_its_dev_dependencies_by_path_are_known(tmp_path: Path) -> None:
    tool = _package(tmp_path, "tool", "tool")
    tool["targets"] = [
        *tool["targets"],  # type: ignore[misc]
        {"kind": ["bin"], "name": "tool-cli", "src_path": str(tmp_path / "tool/src/main.rs")},
    ]
    tool["dependencies"] = [{"name": "tool", "path": str(tmp_path / "tool"), "kind": "dev"}]
    plain = _package(tmp_path, "plain", "plain", deps=("tool",))
    packages = [tool, plain]
    text = json.dumps({"packages": packages, "workspace_members": [p["id"] for p in packages]})
    graph = parse_metadata(text, tmp_path)
    assert graph.crates["tool"].bin_targets == ("tool-cli",)
    assert graph.crates["tool"].dev_paths
    # A normal dependency by path turns on no feature `cargo check --lib` leaves off.
    assert (graph.crates["plain"].bin_targets, graph.crates["plain"].dev_paths) == ((), False)


def test_unreadable_metadata_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(MetadataError, match="cargo metadata output unreadable"):
        parse_metadata("{}", tmp_path)


@pytest.mark.parametrize(
    ("rel", "mine"),
    [
        ("src/lib.rs", True),
        ("crates/a/Cargo.toml", True),
        ("Cargo.lock", True),
        ("build.rs", True),
        ("clippy.toml", True),
        (".cargo/config.toml", True),
        ("README.md", False),
        ("pyproject.toml", False),
        ("src/data.json", False),
    ],
)
def test_the_files_rust_owns(rel: str, mine: bool) -> None:
    assert owns(rel) is mine


def test_a_cargo_project_is_one_with_a_manifest_at_its_root(tmp_path: Path) -> None:
    assert not detect(tmp_path)
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "x"\n', encoding="utf-8")
    assert detect(tmp_path)
