from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.client_config import CONFIG_FILES
from agent_habitat.rules import RULES_FILES
from agent_habitat.verify.snapshot import HABITAT_FILES, take_snapshot


def test_a_clean_checkout_touches_nothing_and_has_a_head(tmp_path: Path) -> None:
    root = build_sample(tmp_path / "calc")
    snap = take_snapshot(root)
    assert snap.touched == []
    assert snap.head is not None
    assert len(snap.head) == 40


def test_a_write_to_a_touched_file_changes_the_id(tmp_path: Path) -> None:
    root = build_sample(tmp_path / "calc")
    (root / "src/calc/text.py").write_text("X = 1\n", encoding="utf-8")
    first = take_snapshot(root)
    assert first.touched == ["src/calc/text.py"]
    (root / "src/calc/text.py").write_text("X = 2\n", encoding="utf-8")
    second = take_snapshot(root)
    assert second.id != first.id
    (root / "src/calc/text.py").write_text("X = 1\n", encoding="utf-8")
    assert take_snapshot(root).id == first.id


def test_untracked_files_count_and_ignored_ones_and_bytecode_do_not(tmp_path: Path) -> None:
    root = build_sample(tmp_path / "calc")
    (root / "notes.txt").write_text("hi", encoding="utf-8")
    (root / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (root / "run.log").write_text("ignored", encoding="utf-8")
    (root / "src/calc/__pycache__").mkdir()
    (root / "src/calc/__pycache__/x.cpython-311.pyc").write_bytes(b"\0")
    assert take_snapshot(root).touched == [".gitignore", "notes.txt"]


def test_a_deleted_file_is_touched_and_marked_deleted(tmp_path: Path) -> None:
    root = build_sample(tmp_path / "calc")
    (root / "src/calc/text.py").unlink()
    snap = take_snapshot(root)
    assert snap.deleted == ["src/calc/text.py"]


def test_outside_git_every_file_is_touched(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("echo a\n", encoding="utf-8")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "junk").write_text("x", encoding="utf-8")
    snap = take_snapshot(tmp_path)
    assert snap.touched == ["a.sh"]
    assert snap.head is None
    assert not snap.in_git


def test_a_project_inside_a_bigger_repository_sees_only_its_own_files(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "mono")
    sub = repo / "services" / "api"
    sub.mkdir(parents=True)
    (sub / "app.py").write_text("X = 1\n", encoding="utf-8")
    (repo / "src/calc/text.py").write_text("Y = 2\n", encoding="utf-8")
    assert take_snapshot(sub).touched == ["app.py"]


def test_pytests_temporary_cache_folders_are_not_part_of_a_change(tmp_path: Path) -> None:
    # pytest builds `.pytest_cache` in `pytest-cache-files-XXXX` and renames it into place;
    # caught before its own `.gitignore` is written, git lists its files as untracked.
    root = build_sample(tmp_path / "calc")
    for folder in (root / "pytest-cache-files-a1b2c3", root / "tests/pytest-cache-files-x"):
        folder.mkdir(parents=True)
        (folder / "README.md").write_text("pytest cache", encoding="utf-8")
    (root / "notes.txt").write_text("hi", encoding="utf-8")
    assert take_snapshot(root).touched == ["notes.txt"]
    outside = tmp_path / "plain"
    (outside / "pytest-cache-files-zz").mkdir(parents=True)
    (outside / "pytest-cache-files-zz" / "CACHEDIR.TAG").write_text("x", encoding="utf-8")
    (outside / "a.sh").write_text("echo a\n", encoding="utf-8")
    assert take_snapshot(outside).touched == ["a.sh"]


def _venv(folder: Path) -> None:
    (folder / "lib/python3.12/site-packages/pkg").mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    (folder / "lib/python3.12/site-packages/pkg/__init__.py").write_text("", encoding="utf-8")
    (folder / "bin").mkdir()
    (folder / "bin/activate_this.py").write_text("", encoding="utf-8")


def test_a_virtualenv_git_does_not_ignore_is_never_part_of_the_change(tmp_path: Path) -> None:
    root = build_sample(tmp_path / "calc")
    _venv(root / ".venv")  # the sample's .gitignore does not list it
    _venv(root / "tools" / "env")  # nor a virtualenv of any name, deeper down
    (root / "tools" / "run.py").write_text("X = 1\n", encoding="utf-8")
    assert take_snapshot(root).touched == ["tools/run.py"]


def test_outside_git_a_virtualenv_of_any_name_is_not_touched(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("echo a\n", encoding="utf-8")
    _venv(tmp_path / "env312")
    assert take_snapshot(tmp_path).touched == ["a.sh"]


def test_the_files_habitat_init_and_rules_write_are_never_the_change(tmp_path: Path) -> None:
    root = build_sample(tmp_path / "calc")
    for rel in [*CONFIG_FILES.values(), *RULES_FILES.values()]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}\n", encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "CLAUDE.md").write_text("not the habitat's\n", encoding="utf-8")
    assert take_snapshot(root).touched == ["docs/CLAUDE.md"]


def test_the_habitats_own_files_are_the_ones_init_and_rules_write() -> None:
    assert set(CONFIG_FILES.values()) | set(RULES_FILES.values()) == HABITAT_FILES


def test_coverage_data_and_the_hypothesis_database_are_never_the_change(tmp_path: Path) -> None:
    # What a project's own test run writes as a tool's store (coverage.py's SQLite data file,
    # its parallel-mode siblings, hypothesis's example database), ignored by git or not.
    root = build_sample(tmp_path / "calc")
    (root / ".coverage").write_bytes(b"SQLite format 3\0")
    (root / ".coverage.host.4242.XyZ").write_bytes(b"SQLite format 3\0")
    (root / "tests/.coverage").write_bytes(b"SQLite format 3\0")
    (root / ".hypothesis/examples/ab12").mkdir(parents=True)
    (root / ".hypothesis/examples/ab12/cd34").write_bytes(b"\0\1")
    # A user's edits beside them still count: the coverage config, a module named for it.
    (root / ".coveragerc").write_text("[run]\nbranch = true\n", encoding="utf-8")
    (root / "src/calc/coverage.py").write_text("X = 1\n", encoding="utf-8")
    (root / "notes.coverage").write_text("mine\n", encoding="utf-8")
    assert take_snapshot(root).touched == [
        ".coveragerc",
        "notes.coverage",
        "src/calc/coverage.py",
    ]
    outside = tmp_path / "plain"
    (outside / ".hypothesis/examples").mkdir(parents=True)
    (outside / ".hypothesis/examples/x").write_bytes(b"\0")
    (outside / ".coverage").write_bytes(b"\0")
    (outside / "a.sh").write_text("echo a\n", encoding="utf-8")
    assert take_snapshot(outside).touched == ["a.sh"]


def test_the_reports_a_test_run_writes_are_never_the_change(tmp_path: Path) -> None:
    # Written for real by pytest and pytest-cov, under names a project's addopts may give.
    pytest_cov = pytest.importorskip("pytest_cov")
    assert pytest_cov
    root = build_sample(tmp_path / "calc")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--cov=calc"]
    argv += ["--cov-report=xml:reports/cov.xml", "--cov-report=json", "--junitxml=junit.xml"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {"coverage.json", "junit.xml", ".coverage"} <= {p.name for p in root.iterdir()}
    assert (root / "reports/cov.xml").is_file()
    # Files of the project's own under the same names are changes.
    (root / "coverage.xml").write_text("<coverage>my fixture</coverage>\n", encoding="utf-8")
    (root / "tests/junit.xml").write_text(
        '<?xml version="1.0"?><testsuites name="nose2"/>\n', encoding="utf-8"
    )
    assert take_snapshot(root).touched == ["coverage.xml", "tests/junit.xml"]


def test_pytest_testmons_database_is_never_the_change(tmp_path: Path) -> None:
    # A user who also runs `pytest --testmon` (termcolor 3.3.0, whose .gitignore lacks it):
    # its SQLite database beside the project sent every verify to the whole suite, "non-Python
    # file .testmondata changed".
    root = build_sample(tmp_path / "calc")
    for name in (".testmondata", ".testmondata-shm", ".testmondata-wal", "tests/.testmondata"):
        (root / name).write_bytes(b"SQLite format 3\0")
    (root / "testmondata.txt").write_text("mine\n", encoding="utf-8")
    assert take_snapshot(root).touched == ["testmondata.txt"]
