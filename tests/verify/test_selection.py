from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.layout import discover_layout
from agent_habitat.verify.select.selection import Impact, analyse_impact
from agent_habitat.verify.snapshot import take_snapshot


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    return build_sample(tmp_path / "calc")


def _impact(root: Path, tmp_path: Path, config: LadderConfig | None = None) -> Impact:
    config = config or LadderConfig()
    snap = take_snapshot(root)
    layout = discover_layout(root, config)
    return analyse_impact(
        layout, snap.touched, snap.deleted, config, tmp_path / "grimp", head=snap.head
    )


def _commit(root: Path) -> None:
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"],
        cwd=root,
        check=True,
    )


def _touch(root: Path, rel: str, extra: str = "\nEDITED = True\n") -> None:
    # Code, not a comment: a comment-only change runs no test (select/deps.py).
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(old + extra, encoding="utf-8")


def test_a_changed_module_selects_only_the_tests_that_import_it(calc: Path, tmp_path: Path) -> None:
    _touch(calc, "src/calc/text.py")
    impact = _impact(calc, tmp_path)
    assert impact.selection.full is False
    assert impact.selection.tests == ["tests/test_text.py"]
    assert impact.changed_modules == ["calc.text"]


def test_tests_importing_a_changed_module_transitively_are_selected(
    calc: Path, tmp_path: Path
) -> None:
    _touch(calc, "src/calc/arith.py")
    impact = _impact(calc, tmp_path)
    assert impact.selection.tests == ["tests/test_arith.py", "tests/test_report.py"]
    assert "calc.report" in impact.affected_modules
    assert impact.affected_files == ["src/calc/arith.py", "src/calc/report.py"]
    assert any("imports calc.report" in r for r in impact.selection.reasons)


def test_a_changed_conftest_widens_to_its_folder(calc: Path, tmp_path: Path) -> None:
    _touch(calc, "tests/unit/test_deep.py", "def test_deep() -> None:\n    pass\n")
    _touch(calc, "tests/unit/conftest.py")
    _touch(calc, "src/calc/text.py")
    impact = _impact(calc, tmp_path)
    assert impact.selection.tests == ["tests/test_text.py", "tests/unit"]
    assert "tests/unit/conftest.py changed (widens to its folder)" in impact.selection.reasons


def test_a_changed_top_level_conftest_widens_to_the_whole_suite(calc: Path, tmp_path: Path) -> None:
    _touch(calc, "conftest.py")
    impact = _impact(calc, tmp_path, LadderConfig(test_paths=["."]))
    assert impact.selection.full is True


def test_a_non_python_change_widens_to_the_full_suite_with_the_reason(
    calc: Path, tmp_path: Path
) -> None:
    _touch(calc, "src/calc/data.json", "{}")
    impact = _impact(calc, tmp_path)
    assert impact.selection.full is True
    assert impact.selection.reasons == ["non-Python file src/calc/data.json changed"]


def test_documentation_changes_do_not_widen(calc: Path, tmp_path: Path) -> None:
    _touch(calc, "README.md")
    impact = _impact(calc, tmp_path)
    assert impact.selection.full is False
    assert impact.selection.tests == []


def test_a_manifest_change_widens_to_the_full_suite(calc: Path, tmp_path: Path) -> None:
    _touch(calc, "pyproject.toml")
    impact = _impact(calc, tmp_path)
    assert impact.selection.full is True
    assert impact.selection.reasons == ["dependency manifest pyproject.toml changed"]


def test_a_changed_test_file_selects_itself(calc: Path, tmp_path: Path) -> None:
    _touch(calc, "tests/test_text.py")
    impact = _impact(calc, tmp_path)
    assert impact.selection.tests == ["tests/test_text.py"]
    assert impact.selection.reasons == ["tests/test_text.py changed"]


def test_a_changed_test_helper_selects_the_tests_that_import_it(calc: Path, tmp_path: Path) -> None:
    _touch(calc, "tests/helpers.py", "def two() -> int:\n    return 2\n")
    _touch(calc, "tests/test_helper_user.py", "from helpers import two\n")
    _commit(calc)
    _touch(calc, "tests/helpers.py")
    impact = _impact(calc, tmp_path)
    assert impact.selection.tests == ["tests/test_helper_user.py"]
    assert impact.selection.reasons == ["tests/test_helper_user.py imports tests/helpers.py"]


def test_an_unchanged_conftest_importing_a_changed_module_widens_its_folder(
    calc: Path, tmp_path: Path
) -> None:
    (calc / "tests/conftest.py").write_text("import calc.text\n", encoding="utf-8")
    _commit(calc)
    _touch(calc, "src/calc/text.py")
    impact = _impact(calc, tmp_path)
    assert impact.selection.tests == ["tests"]


def test_a_deleted_module_widens_to_the_full_suite(calc: Path, tmp_path: Path) -> None:
    (calc / "src/calc/text.py").unlink()
    impact = _impact(calc, tmp_path)
    assert impact.selection.full is True
    assert "calc.text was deleted" in impact.selection.reasons[0]


def test_a_python_file_outside_packages_and_tests_widens(calc: Path, tmp_path: Path) -> None:
    _touch(calc, "scripts/tool.py", "print(1)\n")
    impact = _impact(calc, tmp_path)
    assert impact.selection.full is True
    assert "scripts/tool.py" in impact.selection.reasons[0]


def test_a_syntax_error_in_a_package_widens_instead_of_failing(calc: Path, tmp_path: Path) -> None:
    _touch(calc, "src/calc/text.py", "def broken(:\n")
    impact = _impact(calc, tmp_path)
    assert impact.selection.full is True
    assert impact.graph_error is not None


def test_a_project_that_is_not_python_always_selects_everything(tmp_path: Path) -> None:
    (tmp_path / "build.sh").write_text("echo hi\n", encoding="utf-8")
    impact = _impact(tmp_path, tmp_path / "state")
    assert impact.selection.full is True
    assert "not a Python project" in impact.selection.reasons[0]


def test_tests_inside_a_package_are_selected_through_the_graph(tmp_path: Path) -> None:
    root = tmp_path / "inpkg"
    (root / "pkg" / "tests").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "core.py").write_text("X = 1\n", encoding="utf-8")
    (root / "pkg" / "other.py").write_text("Y = 1\n", encoding="utf-8")
    (root / "pkg" / "tests" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "tests" / "test_core.py").write_text(
        "from pkg.core import X\n", encoding="utf-8"
    )
    (root / "pkg" / "tests" / "test_other.py").write_text(
        "from pkg import other\n", encoding="utf-8"
    )
    (root / "pkg" / "tests" / "conftest.py").write_text("", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    _commit(root)
    _touch(root, "pkg/core.py")
    assert _impact(root, tmp_path).selection.tests == ["pkg/tests/test_core.py"]
    _touch(root, "pkg/tests/conftest.py")
    assert _impact(root, tmp_path).selection.tests == ["pkg/tests"]


def test_without_a_head_commit_the_whole_suite_runs_and_says_why(
    calc: Path, tmp_path: Path
) -> None:
    shutil.rmtree(calc / ".git")  # an sdist unpacked: every file is "touched"
    impact = _impact(calc, tmp_path)
    assert impact.selection.full
    assert impact.selection.reasons[0].startswith("no HEAD commit to compare with"), (
        impact.selection.reasons
    )


def _project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    _commit(root)
    return root


def test_the_projects_python_files_pattern_names_its_test_modules(tmp_path: Path) -> None:
    # voluptuous 0.16.0: `python_files = "tests.py"`, its tests inside the package. Only
    # test_*.py counted as a test, so an edit that failed a test was green, none selected.
    root = _project(
        tmp_path / "vol",
        {
            "pyproject.toml": '[project]\nname = "vol"\n\n[tool.pytest.ini_options]\n'
            'python_files = "tests.py"\ntestpaths = "vol/tests"\n',
            "vol/__init__.py": "",
            "vol/util.py": "def upper(v):\n    return v.upper()\n",
            "vol/tests/__init__.py": "",
            "vol/tests/tests.py": "from vol.util import upper\n\n"
            "def test_upper():\n    assert upper('a') == 'A'\n",
            "vol/tests/helpers.py": "from vol.util import upper\n",
        },
    )
    _touch(root, "vol/util.py")
    impact = _impact(root, tmp_path)
    assert impact.selection.full is False
    assert impact.selection.tests == ["vol/tests/tests.py"]


def test_a_python_files_pattern_outside_the_packages_selects_its_tests(tmp_path: Path) -> None:
    root = _project(
        tmp_path / "chk",
        {
            "pytest.ini": "[pytest]\npython_files = check_*.py *_test.py\n",
            "chk/__init__.py": "def one():\n    return 1\n",
            "checks/check_one.py": "from chk import one\n\ndef test_one():\n    assert one()\n",
            "checks/other_test.py": "import chk\n",
            "checks/test_plain.py": "import chk\n",  # not a test here: no pattern has it
        },
    )
    _touch(root, "chk/__init__.py")
    impact = _impact(root, tmp_path)
    assert impact.selection.tests == ["checks/check_one.py", "checks/other_test.py"]


def _doctest_project(root: Path, ini: str) -> Path:
    return _project(
        root,
        {
            "pyproject.toml": f'[project]\nname = "vol"\n\n[tool.pytest.ini_options]\n{ini}',
            "vol/__init__.py": "",
            "vol/obj.py": "def check(v):\n    return v\n",
            "vol/other.py": "X = 1\n",
            "vol/tests/__init__.py": "",
            "vol/tests/tests.md": "Checks:\n\n    >>> from vol.obj import *\n"
            "    >>> check(1)\n    1\n",
            "vol/tests/test_other.py": "from vol.other import X\n",
            "docs/testing.txt": "    >>> import vol.other\n",
        },
    )


def test_a_doctest_text_file_is_selected_when_what_its_examples_import_changes(
    tmp_path: Path,
) -> None:
    # voluptuous 0.16.0 (`--doctest-glob=*.md`): an edit failing only tests.md:210 was green.
    root = _doctest_project(tmp_path / "vol", 'addopts = "--doctest-glob=*.md -v"\n')
    _touch(root, "vol/obj.py")
    impact = _impact(root, tmp_path)
    assert impact.selection.tests == ["vol/tests/tests.md"]
    assert impact.selection.reasons == ["vol/tests/tests.md imports vol.obj"]
    _touch(root, "vol/tests/tests.md", "\n    >>> 2\n    2\n")
    impact = _impact(root, tmp_path)
    assert impact.selection.full is False
    assert impact.selection.tests == ["vol/tests/tests.md"]


def test_pytests_default_doctest_glob_is_test_star_txt(tmp_path: Path) -> None:
    root = _doctest_project(tmp_path / "vol", "")
    (root / "docs" / "testing.txt").rename(root / "docs" / "test_other.txt")
    _commit(root)
    _touch(root, "vol/other.py")
    impact = _impact(root, tmp_path, LadderConfig(test_paths=["."]))
    assert impact.selection.tests == ["docs/test_other.txt", "vol/tests/test_other.py"]


def test_with_doctest_modules_a_changed_module_runs_its_own_doctests(tmp_path: Path) -> None:
    # voluptuous 0.16.0 with `--doctest-modules` in addopts: an edit of util.Lower's docstring
    # example failed util.py:19 under pytest and was green, tests.py and tests.md selected.
    root = _doctest_project(tmp_path / "vol", 'addopts = "--doctest-modules"\n')
    _touch(root, "vol/obj.py")
    impact = _impact(root, tmp_path, LadderConfig(test_paths=["vol"]))
    assert impact.selection.tests == ["vol/obj.py"]
    _touch(root, "vol/other.py")
    impact = _impact(root, tmp_path, LadderConfig(test_paths=["vol"]))
    assert impact.selection.tests == ["vol/obj.py", "vol/other.py", "vol/tests/test_other.py"]
