"""A single-module project (one `.py` file beside its tests, no package: six, toolz's
forks, many small libraries) records per-test dependency data for its module like a
package's, so a change inside one function selects the tests that ran it, not the suite."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.layout import discover_layout
from agent_habitat.verify.select.selection import Impact, analyse_impact
from agent_habitat.verify.select.testdeps import Recording, deps_store_dir, load_testdeps
from agent_habitat.verify.snapshot import take_snapshot
from git_tree import commit_tree
from project_venv import interpreter

MODULE = """def build() -> list[int]:
    return [1, 2, 3]


TABLE = build()


def add(a: int, b: int) -> int:
    return a + b


def mul(a: int, b: int) -> int:
    return a * b
"""
TESTS = """import calc


def test_add() -> None:
    assert calc.add(1, 2) == 3


def test_mul() -> None:
    assert calc.mul(2, 3) == 6


def test_table() -> None:
    assert calc.TABLE == [1, 2, 3]
"""
OTHER = """from calc import add


def test_add_again() -> None:
    assert add(2, 2) == 4
"""


def _project(root: Path, tests_dir: str) -> Path:
    """`calc.py` at the top; its tests at the top too (no testpaths), or under `tests/` named
    by pytest's testpaths, which leaves the module outside the test roots."""
    pyproject = '[project]\nname = "calc"\nversion = "0"\n'
    if tests_dir:
        pyproject += f'\n[tool.pytest.ini_options]\ntestpaths = ["{tests_dir.rstrip("/")}"]\n'
        pyproject += 'pythonpath = ["."]\n'
    files = {
        "calc.py": MODULE,
        f"{tests_dir}test_calc.py": TESTS,
        f"{tests_dir}test_other.py": OTHER,
        "pyproject.toml": pyproject,
        ".gitignore": "__pycache__/\n",
    }
    return commit_tree(root, files)


def _record(root: Path, state: Path) -> None:
    layout = discover_layout(root, LadderConfig())
    rec = Recording(root, layout, state, take_snapshot(root))
    env = {**os.environ, **rec.env()}
    argv = [interpreter(), "-m", "pytest", "-q", "-p", "no:cacheprovider", *rec.args]
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "recorded test dependencies of 4 tests" in rec.finish(complete=True)


def _impact(root: Path, state: Path) -> Impact:
    config = LadderConfig()
    snap = take_snapshot(root)
    layout = discover_layout(root, config)
    return analyse_impact(
        layout, snap.touched, snap.deleted, config, state / "grimp", head=snap.head
    )


def _edit(root: Path, old: str, new: str) -> None:
    path = root / "calc.py"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.fixture(scope="module", params=["", "tests/"], ids=["flat", "testpaths"])
def recorded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, str]:
    """The project of each layout with its dependency data recorded, once for the module (the
    nested pytest is the slow part); each test works on a copy."""
    tests_dir: str = request.param
    base = tmp_path_factory.mktemp("recorded")
    _record(_project(base / "calc", tests_dir), base / "state")
    return base, tests_dir


@pytest.fixture
def project(recorded: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    base, tests_dir = recorded
    shutil.copytree(base / "state", tmp_path / "state", symlinks=True)
    return Path(shutil.copytree(base / "calc", tmp_path / "calc", symlinks=True)), tests_dir


def test_the_module_is_recorded_block_by_block_like_a_package_file(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    deps = load_testdeps(deps_store_dir(tmp_path / "state"))
    assert deps is not None
    (run,) = deps.runs.values()
    assert "calc.py" in run.files
    assert "calc.py" not in run.side
    assert {"mul", "add"} <= set(run.index["calc.py"])


def test_a_change_inside_a_function_selects_only_the_tests_that_ran_it(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    root, tests_dir = project
    _edit(root, "return a * b", "return a * b + 0")
    selection = _impact(root, tmp_path / "state").selection
    assert selection.full is False
    assert selection.tests == [f"{tests_dir}test_calc.py::test_mul"]


def test_import_time_code_runs_every_test_that_imports_the_module(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    root, tests_dir = project
    _edit(root, "return [1, 2, 3]", "return [1, 2, 3, 4]")  # build() runs at import
    selection = _impact(root, tmp_path / "state").selection
    assert selection.full is False
    assert selection.tests == [f"{tests_dir}test_calc.py", f"{tests_dir}test_other.py"]


def test_without_data_a_change_selects_the_tests_that_import_the_module(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    root, tests_dir = project
    (deps_store_dir(tmp_path / "state") / "deps.json").unlink()
    _edit(root, "return a * b", "return a * b + 0")
    selection = _impact(root, tmp_path / "state").selection
    assert selection.full is False  # not "outside the packages and tests the graph covers"
    assert selection.tests == [f"{tests_dir}test_calc.py", f"{tests_dir}test_other.py"]


def test_a_module_no_test_loaded_is_not_called_changed_when_it_is_not(tmp_path: Path) -> None:
    """xmltodict 0.14.2 ships `ez_setup.py` beside `xmltodict.py`; no test loads it. Every
    verify said "ez_setup.py changed since the recording" (untrue: it was HEAD's) and sent
    it to the import graph."""
    root = _project(tmp_path / "calc", "")
    (root / "ez_setup.py").write_text("def use_setuptools() -> None:\n    pass\n")
    subprocess.run(["git", "add", "ez_setup.py"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ez_setup"],
        cwd=root,
        check=True,
    )
    _record(root, tmp_path / "state")
    _edit(root, "return [1, 2, 3]", "return [1, 2, 3, 4]")  # import-time: the graph decides
    impact = _impact(root, tmp_path / "state")
    assert impact.selection.tests == ["test_calc.py", "test_other.py"]
    assert "ez_setup.py" not in impact.provenance
    (root / "ez_setup.py").write_text("def use_setuptools() -> None:\n    return None\n")
    provenance = _impact(root, tmp_path / "state").provenance
    assert "ez_setup.py" in provenance  # now it did change: named
