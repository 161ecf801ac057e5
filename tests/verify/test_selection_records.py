"""Records that follow the steady state (issue 22): code a test runs through `exec` is the
test's, a test skipped by its mark vouches like one that passed, and a test keeps a record
near HEAD however many edits of import-time code came after it."""

from __future__ import annotations

from pathlib import Path

from agent_habitat.verify import deps_store
from agent_habitat.verify.deps_store import RECORDS_PER_TEST, merge_run
from agent_habitat.verify.select.testdeps import deps_store_dir, load_testdeps

from .test_selection_deps import _edit, _git, _impact, _record, _runs, calc, recorded

__all__ = ["calc", "recorded"]  # the fixtures, shared with test_selection_deps

EXECS = """\
import calc.text


def test_readme() -> None:
    # python-slugify's shape: the README's examples, run by exec in a namespace of their own
    exec(compile("from calc.text import shout\\nassert shout('a')", "README.md", "exec"), {})
"""

MARKED = """\
import sys

import pytest

from calc.arith import mul


@pytest.mark.skipif(sys.version_info > (3,), reason="not on this Python")
def test_marked() -> None:
    assert mul(2, 3) == 6


def test_midway() -> None:
    assert mul(2, 3) == 6
    pytest.skip("after it ran the project's code")
"""


def _commit(root: Path, rel: str, text: str, state: Path) -> None:
    (root / rel).write_text(text, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", rel)
    (deps_store_dir(state) / "deps.json").unlink()
    _record(root, state)


def test_code_a_test_runs_through_exec_is_the_tests_own(calc: Path, tmp_path: Path) -> None:
    _commit(calc, "tests/test_exec.py", EXECS, tmp_path / "state")
    deps = load_testdeps(deps_store_dir(tmp_path / "state"))
    assert deps is not None
    assert all("src/calc/text.py" not in run.imports for run in deps.runs.values())
    _edit(calc, "src/calc/text.py", "return ", "return '' + ")
    impact = _impact(calc, tmp_path)
    selected = impact.selection.tests
    assert not impact.selection.full, impact.selection
    assert _runs(selected, "tests/test_exec.py::test_readme"), selected
    assert not _runs(selected, "tests/test_arith.py::test_mul"), selected
    assert "import time" not in impact.provenance, impact.provenance


def test_a_test_its_mark_skipped_is_not_run_again_after_an_edit(calc: Path, tmp_path: Path) -> None:
    # toolz's shape: a test skipped on this Python ran again after every edit of any code.
    _commit(calc, "tests/test_marked.py", MARKED, tmp_path / "state")
    _edit(calc, "src/calc/arith.py", "return a + b", "return b + a")
    selected = _impact(calc, tmp_path).selection.tests
    assert _runs(selected, "tests/test_arith.py::test_add"), selected
    assert not _runs(selected, "tests/test_marked.py::test_marked"), selected
    # One that skipped after it ran the project's code may have run less than it does now.
    assert _runs(selected, "tests/test_marked.py::test_midway"), selected


def _run(rid: str, near_head: bool, recorded_at: str) -> deps_store.TestRun:
    return deps_store.TestRun(
        id=rid,
        head="c0ffee",
        dirty={"src/calc/arith.py": rid},
        files={},
        side={},
        tests=["tests/test_a.py::test_a"],
        index={},
        imports={},
        modules={},
        recorded_at=recorded_at,
        near_head=near_head,
    )


def test_a_record_near_head_outlives_edits_of_import_time_code(tmp_path: Path) -> None:
    store = tmp_path / "testdeps"
    merge_run(store, _run("near", True, "2026-12-07T00:00:00"), {}, {})
    for i in range(RECORDS_PER_TEST + 1):
        merge_run(store, _run(f"constant{i}", False, f"2026-12-07T00:00:0{i + 1}"), {}, {})
    deps = load_testdeps(store)
    assert deps is not None
    records = deps.records["tests/test_a.py::test_a"]
    assert records[:RECORDS_PER_TEST] == ["constant3", "constant2", "constant1"]
    assert "near" in records
    assert deps.runs["near"].near_head


def test_a_run_knows_whether_it_saw_heads_import_time_code(calc: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    _edit(calc, "src/calc/arith.py", "return a + b", "return b + a")
    _record(calc, state, ["tests/test_arith.py"])
    _edit(calc, "src/calc/arith.py", "return b + a", "return a + b")
    _edit(calc, "src/calc/report.py", "WIDTH = 20", "WIDTH = 21")
    _record(calc, state, ["tests/test_arith.py"])
    deps = load_testdeps(deps_store_dir(state))
    assert deps is not None
    body = next(r for r in deps.runs.values() if set(r.dirty) == {"src/calc/arith.py"})
    constant = next(r for r in deps.runs.values() if "src/calc/report.py" in r.dirty)
    assert body.near_head
    assert not constant.near_head


def test_a_comment_only_edit_runs_nothing_whatever_the_records_saw(
    calc: Path, tmp_path: Path
) -> None:
    # The first comment-only edit after a round of edits: every record of the tests that
    # ran `mul` is of an edit of it, now gone; the tree is HEAD's code, so none can differ.
    (deps_store_dir(tmp_path / "state") / "deps.json").unlink()
    _edit(calc, "src/calc/arith.py", "return a * b", "return b * a")
    _record(calc, tmp_path / "state")
    _edit(calc, "src/calc/arith.py", "return b * a", "return a * b  # the product")
    impact = _impact(calc, tmp_path)
    assert (impact.selection.full, impact.selection.tests) == (False, []), impact.selection
    assert "only comments" in impact.provenance
    _edit(calc, "src/calc/arith.py", "return a * b  # the product", "return b * a")
    assert _runs(_impact(calc, tmp_path).selection.tests, "tests/test_arith.py::test_mul")


SPAWNS = """\
import os
import subprocess
import sys


def test_cli() -> None:
    # python-slugify's shape: the package run in a child process, which no record sees
    code = "from calc.text import shout; assert shout('a') == 'A!'"
    env = {**os.environ, "PYTHONPATH": "src"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
"""


def test_a_test_that_starts_a_process_is_selected_for_a_change_of_the_projects_code(
    calc: Path, tmp_path: Path
) -> None:
    _commit(calc, "tests/test_spawns.py", SPAWNS, tmp_path / "state")
    deps = load_testdeps(deps_store_dir(tmp_path / "state"))
    assert deps is not None
    (run,) = deps.runs.values()
    assert [run.tests[i] for i in run.spawned] == ["tests/test_spawns.py::test_cli"]
    _edit(calc, "src/calc/text.py", "return ", "return '' + ")
    selected = _impact(calc, tmp_path).selection.tests
    assert _runs(selected, "tests/test_spawns.py::test_cli"), selected
    assert not _runs(selected, "tests/test_arith.py::test_mul"), selected
