"""`[tool.habitat.generated]`: which generators are outdated, and bad tables named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_habitat.errors import ConfigError
from agent_habitat.verify.generated import Generator, load_generators, outdated
from agent_habitat.verify.ladder import _with_regeneration
from agent_habitat.verify.models import RungName

PROTOS = Generator(inputs=["protos/*.proto"], outputs=["src/*_pb2.py"], command="make protos")


def _touch(root: Path, rel: str, mtime: int) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n", encoding="utf-8")
    os.utime(path, ns=(mtime, mtime))


def test_outputs_newer_than_every_input_are_fresh(tmp_path: Path) -> None:
    _touch(tmp_path, "protos/a.proto", 1_000)
    _touch(tmp_path, "src/a_pb2.py", 2_000)
    assert outdated(tmp_path, {"protos": PROTOS}) == {}


def test_an_input_newer_than_the_oldest_output_is_outdated(tmp_path: Path) -> None:
    _touch(tmp_path, "protos/a.proto", 1_000)
    _touch(tmp_path, "protos/b.proto", 5_000)
    _touch(tmp_path, "src/a_pb2.py", 4_000)
    _touch(tmp_path, "src/b_pb2.py", 9_000)
    assert outdated(tmp_path, {"protos": PROTOS}) == {
        "protos": "src/a_pb2.py is older than protos/b.proto"
    }


def test_no_output_yet_is_outdated(tmp_path: Path) -> None:
    _touch(tmp_path, "protos/a.proto", 1_000)
    assert outdated(tmp_path, {"protos": PROTOS}) == {"protos": "no file matches src/*_pb2.py"}


def test_no_input_means_nothing_to_generate(tmp_path: Path) -> None:
    assert outdated(tmp_path, {"protos": PROTOS}) == {}


def _pyproject(root: Path, text: str) -> None:
    (root / "pyproject.toml").write_text(text, encoding="utf-8")


def test_generators_load_from_named_tables(tmp_path: Path) -> None:
    _pyproject(
        tmp_path,
        '[tool.habitat.generated.protos]\ninputs = ["protos/*.proto"]\n'
        'outputs = ["src/*_pb2.py"]\ncommand = ["make", "protos"]\n',
    )
    assert load_generators(tmp_path) == {
        "protos": Generator(
            inputs=["protos/*.proto"], outputs=["src/*_pb2.py"], command=["make", "protos"]
        )
    }


def test_a_generator_without_a_command_is_named_in_the_error(tmp_path: Path) -> None:
    _pyproject(tmp_path, '[tool.habitat.generated.protos]\ninputs = ["a"]\noutputs = ["b"]\n')
    with pytest.raises(ConfigError, match=r"\[tool.habitat.generated.protos\].command"):
        load_generators(tmp_path)


def test_a_generator_that_is_not_a_table_says_what_one_looks_like(tmp_path: Path) -> None:
    _pyproject(tmp_path, '[tool.habitat.generated]\nprotos = "make"\n')
    with pytest.raises(ConfigError, match="must be a table with inputs, outputs and command"):
        load_generators(tmp_path)


def test_outdated_sources_run_build_affected_right_after_diagnose_files() -> None:
    stale = {"protos": "no file matches src/*_pb2.py"}
    standard: list[RungName] = ["diagnose.files", "compile.project", "test.scoped"]
    assert _with_regeneration(standard, stale) == [
        "diagnose.files",
        "build.affected",
        "compile.project",
        "test.scoped",
    ]
    assert _with_regeneration(["diagnose.files"], stale) == ["diagnose.files"]
    assert _with_regeneration(["test.full"], stale) == ["build.affected", "test.full"]
    assert _with_regeneration(standard, {}) == standard
