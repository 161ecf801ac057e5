"""Generated sources older than their inputs: a green `diagnose.files` is provisional, and
`build.affected` regenerates them before the higher rungs run (real processes)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, run_ladder
from git_tree import IGNORED, commit_tree, ladder_pyproject
from git_tree import write as _write

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

# The "generator": each line of the .txt becomes a constant of the generated module.
GENERATE = """#!/bin/sh
set -e
{ echo "# generated from gen/names.txt"; while read -r n; do echo "$n = '$n'"; done \\
  < gen/names.txt; } > shop/names_gen.py
"""
TEST = """from shop.names_gen import apple


def test_apple() -> None:
    assert apple == "apple"
"""


def _project(root: Path, command: str) -> None:
    _write(root, "shop/__init__.py", "")
    _write(root, "gen/names.txt", "apple\n")
    _write(root, "generate.sh", GENERATE)
    _write(root, "tests/test_names.py", TEST)
    ladder = (
        'type_checker = "compileall"\nselection_ignore = []\n\n'
        '[tool.habitat.generated.names]\ninputs = ["gen/*.txt"]\n'
        f'outputs = ["shop/names_gen.py"]\ncommand = {command!r}\n'
    )
    _write(root, "pyproject.toml", ladder_pyproject("shop", ladder))
    subprocess.run(["sh", "generate.sh"], cwd=root, check=True)
    commit_tree(root, {".gitignore": IGNORED}, "shop")


def _older(root: Path, rel: str) -> None:
    """The generated module predates its input (it was not regenerated after an edit)."""
    source = (root / "gen/names.txt").stat().st_mtime_ns
    os.utime(root / rel, ns=(source - 10**9, source - 10**9))


async def test_outdated_generated_code_is_regenerated_before_the_tests_run(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    _project(root, "sh generate.sh")
    # The change: a new input line; `shop/__init__.py` touched so diagnose.files has a file.
    _write(root, "gen/names.txt", "apple\npear\n")
    _write(root, "shop/__init__.py", "VERSION = 1\n")
    _older(root, "shop/names_gen.py")
    result = await run_ladder(root, LadderRequest(policy="standard"), bus=InMemoryEventBus("t"))
    rungs = [r.rung for r in result.rungs]
    assert rungs == ["diagnose.files", "build.affected", "compile.project", "test.scoped"]
    diagnose, build = result.rungs[0], result.rungs[1]
    assert diagnose.state == "green"
    assert diagnose.provisional
    assert "names: shop/names_gen.py is older than gen/names.txt" in (diagnose.reason or "")
    assert build.state == "green", build
    assert any(n.startswith("regenerated names") for n in build.notes), build.notes
    assert "pear = 'pear'" in (root / "shop/names_gen.py").read_text(encoding="utf-8")
    assert result.state == "green"


async def test_a_generator_that_fails_stops_the_climb_before_the_tests(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    _project(root, "echo protoc not found >&2; exit 3")
    _write(root, "shop/__init__.py", "VERSION = 1\n")
    _older(root, "shop/names_gen.py")
    result = await run_ladder(root, LadderRequest(policy="standard"), bus=InMemoryEventBus("t"))
    states = {r.rung: r.state for r in result.rungs}
    assert states == {
        "diagnose.files": "green",
        "build.affected": "red",
        "compile.project": "skipped",
        "test.scoped": "skipped",
    }
    build = result.rungs[1]
    assert build.reason is not None
    assert build.reason.startswith("regenerating names failed (exit 3): protoc not found")
    assert result.state == "red"


async def test_fresh_generated_code_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    _project(root, "sh generate.sh")
    _write(root, "shop/__init__.py", "VERSION = 1\n")
    result = await run_ladder(root, LadderRequest(policy="standard"), bus=InMemoryEventBus("t"))
    assert [r.rung for r in result.rungs] == ["diagnose.files", "compile.project", "test.scoped"]
    assert not result.rungs[0].provisional
    assert result.state == "green"
