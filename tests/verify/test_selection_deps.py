"""Selection with recorded per-test dependency data: narrower where the data is valid, the
import graph wherever it is missing or stale, never narrower than what the tests ran."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.layout import discover_layout
from agent_habitat.verify.select.selection import Impact, analyse_impact
from agent_habitat.verify.select.testdeps import Recording, RunScope, deps_store_dir, load_testdeps
from agent_habitat.verify.snapshot import take_snapshot
from project_venv import interpreter

# Extra package code: a function that runs at import time (`TABLE = build()`), a session
# fixture that runs package code once for the two tests that use it, and a test helper
# whose module body calls package code.
_EXTRA = {
    "src/calc/table.py": (
        "def build() -> list[int]:\n    return [1, 2, 3]\n\n\nTABLE = build()\n\n\n"
        "def first() -> int:\n    return TABLE[0]\n"
    ),
    "tests/test_table.py": (
        "from calc.table import first\n\n\ndef test_first() -> None:\n    assert first() == 1\n"
    ),
    "tests/conftest.py": (
        "import pytest\n\nfrom calc.text import shout\n\n\n@pytest.fixture\n"
        "def numbers() -> list[int]:\n    return [1, 2, 3]\n\n\n"
        '@pytest.fixture(scope="session")\ndef loud() -> str:\n    return shout("x")\n'
    ),
    "tests/test_loud.py": (
        "def test_loud_a(loud: str) -> None:\n    assert loud\n\n\n"
        "def test_loud_b(loud: str) -> None:\n    assert loud\n"
    ),
    "tests/helper.py": "from calc.arith import mul\n\nSIX = mul(2, 3)\n",
    "tests/test_helper.py": (
        "from helper import SIX\n\n\ndef test_six() -> None:\n    assert SIX == 6\n"
    ),
}


def _git(root: Path, *args: str) -> None:
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *who, *args], cwd=root, check=True, capture_output=True)


def _record(root: Path, state: Path, tests: list[str] | None = None) -> Recording:
    """A recorded pytest run: the whole suite, or `tests` (files run whole, node ids not)."""
    layout = discover_layout(root, LadderConfig())
    scope = (
        RunScope()
        if tests is None
        else RunScope(whole_suite=False, paths=[t for t in tests if "::" not in t])
    )
    rec = Recording(root, layout, state, take_snapshot(root), scope)
    env = {**os.environ, **rec.env()}
    argv = [interpreter(), "-m", "pytest", "-q", "-p", "no:cacheprovider", *rec.args]
    argv += tests or []
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "recorded test dependencies of" in rec.finish(complete=True)
    return rec


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample project with its dependency data recorded, once for the module (the nested
    pytest is the slow part); each test works on a copy."""
    base = tmp_path_factory.mktemp("recorded")
    root = build_sample(base / "calc")
    for rel, text in _EXTRA.items():
        (root / rel).write_text(text, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "extra")
    _record(root, base / "state")
    return base


def _copy(prepared: Path, tmp_path: Path) -> Path:
    shutil.copytree(prepared / "state", tmp_path / "state", symlinks=True)
    return Path(shutil.copytree(prepared / "calc", tmp_path / "calc", symlinks=True))


@pytest.fixture
def calc(recorded: Path, tmp_path: Path) -> Path:
    return _copy(recorded, tmp_path)


def _impact(root: Path, tmp_path: Path) -> Impact:
    config = LadderConfig()
    snap = take_snapshot(root)
    layout = discover_layout(root, config)
    return analyse_impact(
        layout, snap.touched, snap.deleted, config, tmp_path / "state" / "grimp", head=snap.head
    )


def _runs(selected: list[str], test: str) -> bool:
    """Whether pytest given `selected` runs `test` (by its id or its whole file)."""
    return test in selected or test.partition("::")[0] in selected


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_change_inside_a_function_selects_the_tests_that_ran_it(
    calc: Path, tmp_path: Path
) -> None:
    _edit(calc, "src/calc/arith.py", "return a * b", "return a * b + 0")
    selection = _impact(calc, tmp_path).selection
    assert selection.full is False
    # mul ran in test_mul, in total() via test_total, and in helper.py's module body.
    assert selection.tests == [
        "tests/test_arith.py::test_mul",
        "tests/test_helper.py",
        "tests/test_report.py",  # its only test: the file whole
    ]
    assert "tests/test_arith.py::test_add" not in selection.tests


def test_without_data_the_same_change_selects_every_importer(calc: Path, tmp_path: Path) -> None:
    (deps_store_dir(tmp_path / "state") / "deps.json").unlink()
    _edit(calc, "src/calc/arith.py", "return a * b", "return a * b + 0")
    assert _impact(calc, tmp_path).selection.tests == [
        "tests/test_arith.py",
        "tests/test_helper.py",
        "tests/test_report.py",
    ]


def test_module_level_code_falls_back_to_the_import_graph(calc: Path, tmp_path: Path) -> None:
    _edit(calc, "src/calc/report.py", "WIDTH = 20", "WIDTH = 21")
    selection = _impact(calc, tmp_path).selection
    assert selection.tests == ["tests/test_report.py"]
    assert "report.py: import-time code differs from the recorded run's" in selection.reasons[0]


def test_a_function_that_runs_at_import_time_falls_back_to_the_import_graph(
    calc: Path, tmp_path: Path
) -> None:
    # No test calls build() (it ran while calc.table was imported): the data alone would
    # select nothing, exactly the miss pytest-testmon has.
    _edit(calc, "src/calc/table.py", "return [1, 2, 3]", "return [0, 2, 3]")
    selection = _impact(calc, tmp_path).selection
    assert selection.tests == ["tests/test_table.py"]
    assert "runs at import time" in selection.reasons[0]


def test_code_a_session_fixture_ran_selects_every_test_using_the_fixture(
    calc: Path, tmp_path: Path
) -> None:
    _edit(calc, "src/calc/text.py", 'return s.upper() + "!"', 'return s.upper() + "?"')
    selection = _impact(calc, tmp_path).selection
    assert _runs(selection.tests, "tests/test_loud.py::test_loud_a")
    assert _runs(selection.tests, "tests/test_loud.py::test_loud_b")
    assert _runs(selection.tests, "tests/test_text.py::test_shout")


def test_a_conftest_change_still_widens_to_its_folder(calc: Path, tmp_path: Path) -> None:
    _edit(calc, "tests/conftest.py", "return [1, 2, 3]", "return [1, 2, 4]")
    assert _impact(calc, tmp_path).selection.tests == ["tests"]


def test_a_non_python_file_still_widens_to_the_whole_suite(calc: Path, tmp_path: Path) -> None:
    (calc / "src/calc/data.json").write_text("{}", encoding="utf-8")
    selection = _impact(calc, tmp_path).selection
    assert selection.full is True
    assert selection.reasons == ["non-Python file src/calc/data.json changed"]


def test_a_data_file_committed_since_a_run_is_vouched_for_by_a_later_run_that_saw_it(
    calc: Path, tmp_path: Path
) -> None:
    # glom 25.12.0: egg-info committed after the recording of HEAD's export; every verify at
    # the new HEAD ran the whole suite ("non-Python file glom.egg-info/PKG-INFO changed"),
    # though the runs since had seen it as it is.
    (calc / "src/calc/data.json").write_text("{}", encoding="utf-8")
    _git(calc, "add", "-A")
    _git(calc, "commit", "-qm", "data")
    _record(calc, tmp_path / "state")
    _edit(calc, "src/calc/arith.py", "return a * b", "return b * a")
    selection = _impact(calc, tmp_path).selection
    assert selection.full is False
    assert _runs(selection.tests, "tests/test_arith.py::test_mul")
    assert not _runs(selection.tests, "tests/test_text.py::test_shout")


def test_a_data_file_committed_since_the_only_run_still_runs_every_test_it_recorded(
    calc: Path, tmp_path: Path
) -> None:
    deps = load_testdeps(deps_store_dir(tmp_path / "state"))
    assert deps is not None
    (run,) = deps.runs.values()
    (calc / "src/calc/data.json").write_text("{}", encoding="utf-8")
    _git(calc, "add", "-A")
    _git(calc, "commit", "-qm", "data")
    _edit(calc, "src/calc/arith.py", "return a * b", "return b * a")
    selection = _impact(calc, tmp_path).selection
    assert selection.full or all(_runs(selection.tests, test) for test in run.tests)


def test_a_file_without_recorded_data_falls_back_to_the_import_graph(
    calc: Path, tmp_path: Path
) -> None:
    store = deps_store_dir(tmp_path / "state") / "deps.json"
    data = json.loads(store.read_text(encoding="utf-8"))
    for run in data["runs"].values():
        del run["files"]["src/calc/arith.py"]
    store.write_text(json.dumps(data), encoding="utf-8")
    _edit(calc, "src/calc/arith.py", "return a * b", "return a * b + 0")
    selection = _impact(calc, tmp_path).selection
    assert selection.tests == [
        "tests/test_arith.py",
        "tests/test_helper.py",
        "tests/test_report.py",
    ]
    assert "no dependency data for src/calc/arith.py" in selection.reasons[0]


def test_data_from_a_commit_git_does_not_know_runs_the_whole_suite(
    calc: Path, tmp_path: Path
) -> None:
    # Without the commit, git cannot say which data files changed since: nothing is trusted.
    store = deps_store_dir(tmp_path / "state") / "deps.json"
    data = json.loads(store.read_text(encoding="utf-8"))
    for run in data["runs"].values():
        run["head"] = "0" * 40
    store.write_text(json.dumps(data), encoding="utf-8")
    _edit(calc, "src/calc/arith.py", "return a * b", "return a * b + 0")
    selection = _impact(calc, tmp_path).selection
    assert selection.full is True
    assert "which git does not know" in selection.reasons[0]


def test_changes_committed_since_the_recording_still_count(calc: Path, tmp_path: Path) -> None:
    # add() changed and was committed after the recording; now only text.py is touched.
    _edit(calc, "src/calc/arith.py", "return a + b", "return b + a")
    _git(calc, "commit", "-qam", "add")
    _edit(calc, "src/calc/text.py", 'return s.upper() + "!"', 'return s.upper() + "?"')
    selection = _impact(calc, tmp_path).selection
    assert _runs(selection.tests, "tests/test_arith.py::test_add")
    assert _runs(selection.tests, "tests/test_report.py::test_total")


def test_a_test_file_changed_since_the_recording_runs_whole(calc: Path, tmp_path: Path) -> None:
    _edit(calc, "tests/test_arith.py", "== 6", "== 6  # checked")
    _edit(calc, "tests/test_arith.py", "assert mul(2, 3)", "assert mul(3, 2)")
    assert _impact(calc, tmp_path).selection.tests == ["tests/test_arith.py"]


def test_the_data_never_selects_less_than_the_tests_that_ran_the_code(
    calc: Path, tmp_path: Path
) -> None:
    deps = load_testdeps(deps_store_dir(tmp_path / "state"))
    assert deps is not None
    (run,) = deps.runs.values()
    ran_mul = {run.tests[i] for i in run.index["src/calc/arith.py"]["mul"]}
    _edit(calc, "src/calc/arith.py", "return a * b", "return b * a")
    selected = _impact(calc, tmp_path).selection.tests
    for test in ran_mul:
        assert test in selected or test.partition("::")[0] in selected


def test_a_comment_only_edit_selects_nothing(calc: Path, tmp_path: Path) -> None:
    _edit(calc, "src/calc/arith.py", "return a * b", "return a * b  # product")
    assert _impact(calc, tmp_path).selection.tests == []


@pytest.fixture(scope="module")
def recorded_subset(recorded: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mul edited (`b * a`) and the tests selected for that edit recorded after the whole
    suite's run: once for the module's two tests that begin so, each on a copy. The import
    graph's cache the selection left is not kept: each test's first selection builds it."""
    base = tmp_path_factory.mktemp("recorded-subset")
    calc = _copy(recorded, base)
    _edit(calc, "src/calc/arith.py", "return a * b", "return b * a")
    _record(calc, base / "state", _impact(calc, base).selection.tests)
    shutil.rmtree(base / "state" / "grimp", ignore_errors=True)
    return base


@pytest.fixture
def subset(recorded_subset: Path, tmp_path: Path) -> Path:
    return _copy(recorded_subset, tmp_path)


def test_a_subset_run_merges_per_test_and_the_edit_still_counts_against_head(
    subset: Path, tmp_path: Path
) -> None:
    calc = subset  # mul edited, the selected tests recorded after the whole suite's run
    deps = load_testdeps(deps_store_dir(tmp_path / "state"))
    assert deps is not None
    assert len(deps.runs) == 2
    assert len(deps.records["tests/test_arith.py::test_mul"]) == 2
    assert len(deps.records["tests/test_arith.py::test_add"]) == 1
    # A second edit elsewhere: mul is still changed against HEAD, so its tests still run.
    _edit(calc, "src/calc/text.py", 'return s.upper() + "!"', 'return s.upper() + "?"')
    selected = _impact(calc, tmp_path).selection.tests
    for test in (
        "tests/test_arith.py::test_mul",
        "tests/test_report.py::test_total",
        "tests/test_helper.py::test_six",
        "tests/test_text.py::test_shout",
        "tests/test_loud.py::test_loud_a",
    ):
        assert _runs(selected, test), (test, selected)
    assert not _runs(selected, "tests/test_arith.py::test_add")


def test_after_a_revert_the_record_from_before_the_edit_serves_again(
    subset: Path, tmp_path: Path
) -> None:
    calc = subset  # mul edited, the selected tests recorded after the whole suite's run
    _edit(calc, "src/calc/arith.py", "return b * a", "return a * b")  # the revert
    _edit(calc, "src/calc/arith.py", "return a + b", "return b + a")
    selected = _impact(calc, tmp_path).selection.tests
    # test_mul's newest record saw the edited mul; the one before saw mul as it is again.
    assert not _runs(selected, "tests/test_arith.py::test_mul"), selected
    assert _runs(selected, "tests/test_arith.py::test_add")
    assert _runs(selected, "tests/test_report.py::test_total")


def test_a_test_committed_since_the_recording_runs_its_whole_file(
    calc: Path, tmp_path: Path
) -> None:
    path = calc / "tests/test_arith.py"
    path.write_text(
        path.read_text(encoding="utf-8") + "\n\ndef test_new() -> None:\n    assert True\n",
        encoding="utf-8",
    )
    _git(calc, "commit", "-qam", "a new test")
    _edit(calc, "src/calc/text.py", 'return s.upper() + "!"', 'return s.upper() + "?"')
    selected = _impact(calc, tmp_path).selection.tests
    assert "tests/test_arith.py" in selected


def test_a_test_gone_since_the_recording_is_never_named(calc: Path, tmp_path: Path) -> None:
    path = calc / "tests/test_arith.py"
    text = path.read_text(encoding="utf-8")
    start = text.index("def test_mul")
    path.write_text(text[:start].rstrip() + "\n", encoding="utf-8")
    _record(calc, tmp_path / "state", ["tests/test_arith.py"])
    _git(calc, "commit", "-qam", "no test_mul")
    _edit(calc, "src/calc/arith.py", "return a * b", "return b * a")
    selected = _impact(calc, tmp_path).selection.tests
    assert "tests/test_arith.py::test_mul" not in selected
    assert "tests/test_arith.py" not in selected
    assert _runs(selected, "tests/test_report.py::test_total")


ORDERED = """\
from calc.arith import mul


class TestOrdered:
    ready = False

    def test_a_prepares(self) -> None:
        type(self).ready = True

    def test_b_multiplies(self) -> None:
        assert type(self).ready, "run without test_a_prepares"
        assert mul(2, 3) == 6
"""


def test_a_record_of_a_test_that_failed_cannot_vouch_for_it(calc: Path, tmp_path: Path) -> None:
    # pathspec's shape: run alone, a test fails on state another test sets up, before the
    # code it tests. That record says it never ran the edited code; it must not vouch.
    (calc / "tests/test_ordered.py").write_text(ORDERED, encoding="utf-8")
    _git(calc, "add", "-A")
    _git(calc, "commit", "-qm", "ordered")
    _record(calc, tmp_path / "state")  # the whole suite: test_b ran mul
    _edit(calc, "src/calc/arith.py", "return a * b", "return a * b + 1")
    test_b = "tests/test_ordered.py::TestOrdered::test_b_multiplies"
    layout = discover_layout(calc, LadderConfig())
    rec = Recording(
        calc, layout, tmp_path / "state", take_snapshot(calc), RunScope(whole_suite=False)
    )
    argv = [interpreter(), "-m", "pytest", "-q", "-p", "no:cacheprovider", *rec.args, test_b]
    env = {**os.environ, **rec.env()}
    done = subprocess.run(argv, cwd=calc, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "run without test_a_prepares" in done.stdout
    rec.finish(complete=True)
    deps = load_testdeps(deps_store_dir(tmp_path / "state"))
    assert deps is not None
    newest = deps.runs[deps.records[test_b][0]]
    assert newest.ended_early == [newest.tests.index(test_b)]
    selection = _impact(calc, tmp_path).selection
    assert _runs(selection.tests, test_b), selection


SKIPPED = """\
import sys

import pytest

from calc.arith import mul


@pytest.mark.skipif(sys.version_info > (3,), reason="not on this Python")
def test_mul_where_it_runs() -> None:
    assert mul(2, 3) == 6
"""


_SKIPPED_TEST = "tests/test_skipped.py::test_mul_where_it_runs"


@pytest.fixture(scope="module")
def recorded_with_a_skip(recorded: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample with a test this Python skips, committed, and the whole suite recorded
    afresh (no older data): once for the module's three tests of skipped tests, each on a
    copy, as `recorded` is."""
    base = tmp_path_factory.mktemp("recorded-skip")
    calc = _copy(recorded, base)
    (calc / "tests/test_skipped.py").write_text(SKIPPED, encoding="utf-8")
    _git(calc, "add", "-A")
    _git(calc, "commit", "-qm", "a test this Python skips")
    (deps_store_dir(base / "state") / "deps.json").unlink()
    _record(calc, base / "state")
    return base


@pytest.fixture
def skipped(recorded_with_a_skip: Path, tmp_path: Path) -> Path:
    return _copy(recorded_with_a_skip, tmp_path)


def test_a_comment_only_edit_needs_no_test_though_one_was_skipped(
    skipped: Path, tmp_path: Path
) -> None:
    # toolz's shape: a test skipped on this Python cannot vouch for itself, but when the
    # tree compiles to the very code the skipping run saw, it skips the same way again.
    calc = skipped
    _edit(calc, "src/calc/arith.py", "return a * b", "return a * b  # the product")
    _edit(calc, "src/calc/arith.py", "def mul", "# a new first line\ndef mul")
    selection = _impact(calc, tmp_path).selection
    assert (selection.full, selection.tests) == (False, []), selection


def test_a_skipped_test_still_cannot_vouch_when_code_changed(skipped: Path, tmp_path: Path) -> None:
    calc, test = skipped, _SKIPPED_TEST
    # A new function in a module it imports: the import graph decides, and selects it.
    _edit(
        calc, "src/calc/text.py", "def shout", "def unused() -> int:\n    return 1\n\n\ndef shout"
    )
    selection = _impact(calc, tmp_path).selection
    assert _runs(selection.tests, test) or selection.full, selection


def test_a_skipped_test_still_cannot_vouch_when_a_data_file_changed(
    skipped: Path, tmp_path: Path
) -> None:
    calc, test = skipped, _SKIPPED_TEST
    (calc / "tests/data.txt").write_text("a skip condition may read it\n", encoding="utf-8")
    _edit(calc, "src/calc/arith.py", "return a * b", "return a * b  # the product")
    selection = _impact(calc, tmp_path).selection
    assert _runs(selection.tests, test) or selection.full, selection


def test_a_failed_test_is_run_again_even_after_a_comment_only_edit(
    calc: Path, tmp_path: Path
) -> None:
    # Its failure is still there: a comment does not vouch for a red test.
    (calc / "tests/test_red.py").write_text(
        "def test_red() -> None:\n    assert 1 == 2\n", encoding="utf-8"
    )
    _git(calc, "add", "-A")
    _git(calc, "commit", "-qm", "a failing test")
    (deps_store_dir(tmp_path / "state") / "deps.json").unlink()
    layout = discover_layout(calc, LadderConfig())
    rec = Recording(calc, layout, tmp_path / "state", take_snapshot(calc), RunScope())
    argv = [interpreter(), "-m", "pytest", "-q", "-p", "no:cacheprovider", *rec.args]
    env = {**os.environ, **rec.env()}
    done = subprocess.run(argv, cwd=calc, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    rec.finish(complete=True)
    _edit(calc, "src/calc/arith.py", "return a * b", "return a * b  # the product")
    selection = _impact(calc, tmp_path).selection
    assert _runs(selection.tests, "tests/test_red.py::test_red"), selection


def test_heads_blocks_are_the_current_heads_after_a_commit(calc: Path, tmp_path: Path) -> None:
    """HEAD's side is read once per commit (deps.py): after the change is recorded and
    committed, the next edit is compared with the new HEAD, not the one read before."""
    _edit(calc, "src/calc/arith.py", "return a * b", "return b * a")
    assert _runs(_impact(calc, tmp_path).selection.tests, "tests/test_arith.py::test_mul")
    _record(calc, tmp_path / "state")  # the whole suite, on the edited tree
    _git(calc, "commit", "-qam", "mul")
    _edit(calc, "src/calc/arith.py", "return a + b", "return b + a")
    selected = _impact(calc, tmp_path).selection.tests
    assert _runs(selected, "tests/test_arith.py::test_add")
    assert not _runs(selected, "tests/test_arith.py::test_mul"), selected
