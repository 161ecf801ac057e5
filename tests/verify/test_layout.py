from __future__ import annotations

from pathlib import Path

import pytest

from agent_habitat.errors import ConfigError
from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.layout import discover_layout, is_manifest


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_a_flat_layout_finds_packages_but_not_tests_or_docs(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "app/__init__.py": "",
            "tests/__init__.py": "",
            "docs/__init__.py": "",
            "pytest.ini": "[pytest]\ntestpaths = tests\n",
            "tests/test_app.py": "",
        },
    )
    layout = discover_layout(root, LadderConfig())
    assert sorted(layout.packages) == ["app"]
    assert layout.test_roots == [root / "tests"]
    assert sorted(layout.side_files) == ["tests/__init__.py", "tests/test_app.py"]
    assert layout.is_python
    assert layout.module_of("app/__init__.py") == "app"
    assert layout.file_of("app") == root / "app" / "__init__.py"


def test_configured_packages_must_exist_and_the_error_names_the_key(tmp_path: Path) -> None:
    root = _write(tmp_path, {"src/real/__init__.py": ""})
    assert list(discover_layout(root, LadderConfig(packages=["real"])).packages) == ["real"]
    with pytest.raises(ConfigError, match=r"\[tool\.habitat\.ladder\]\.packages.*'ghost'"):
        discover_layout(root, LadderConfig(packages=["ghost"]))


def test_a_folder_of_scripts_is_not_a_python_project(tmp_path: Path) -> None:
    root = _write(tmp_path, {"build.sh": "", "pyproject.toml": "[tool.habitat]\n"})
    assert not discover_layout(root, LadderConfig()).is_python


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pyproject.toml", True),
        ("requirements-dev.txt", True),
        ("sub/uv.lock", True),
        ("notes.txt", False),
        ("setup.py", True),
    ],
)
def test_dependency_manifests_are_recognised(path: str, *, expected: bool) -> None:
    assert is_manifest(path) is expected


def test_a_virtualenv_of_any_name_holds_no_side_files(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "app/__init__.py": "",
            "test_app.py": "",
            "env/pyvenv.cfg": "home = /usr/bin\n",
            "env/bin/activate_this.py": "",
            "env/lib/python3.12/test_vendored.py": "",
        },
    )
    assert sorted(discover_layout(root, LadderConfig()).side_files) == ["test_app.py"]


def test_top_level_modules_are_the_project_s_code_but_not_its_tooling_or_tests(
    tmp_path: Path,
) -> None:
    # parse 1.20 ships one module, `parse.py`, beside pyproject.toml (setuptools py-modules).
    root = _write(
        tmp_path,
        {
            "parse.py": "",
            "helpers.py": "",
            "setup.py": "",
            "conftest.py": "",
            "test_parse.py": "",
            "_version.py": "",
            "pkg/__init__.py": "",
            "tests/test_more.py": "",
        },
    )
    layout = discover_layout(root, LadderConfig())
    assert sorted(layout.modules) == ["helpers", "parse"]
    assert sorted(layout.packages) == ["pkg"]
    configured = discover_layout(root, LadderConfig.model_validate({"packages": ["pkg"]}))
    assert configured.modules == {}, "configured packages say which code is the project's"


@pytest.mark.parametrize(
    ("files", "patterns"),
    [
        ({}, ("test_*.py", "*_test.py")),
        (
            {"pyproject.toml": '[tool.pytest.ini_options]\npython_files = "tests.py"\n'},
            ("tests.py",),
        ),
        (
            {"pyproject.toml": '[tool.pytest.ini_options]\npython_files = ["a_*.py", "b.py"]\n'},
            ("a_*.py", "b.py"),
        ),
        (
            {"tox.ini": "[pytest]\npython_files = check_*.py\n    *_check.py\n"},
            ("check_*.py", "*_check.py"),
        ),
        ({"setup.cfg": "[tool:pytest]\npython_files = t_*.py\n"}, ("t_*.py",)),
        # pytest reads one file: pytest.ini wins over pyproject.toml, even without the key.
        (
            {
                "pytest.ini": "[pytest]\naddopts = -q\n",
                "pyproject.toml": '[tool.pytest.ini_options]\npython_files = "tests.py"\n',
            },
            ("test_*.py", "*_test.py"),
        ),
    ],
)
def test_the_test_file_patterns_are_pytests_python_files(
    tmp_path: Path, files: dict[str, str], patterns: tuple[str, ...]
) -> None:
    layout = discover_layout(_write(tmp_path, {"app/__init__.py": "", **files}), LadderConfig())
    assert layout.test_patterns == patterns
    assert layout.is_test("a/b/tests.py") == ("tests.py" in patterns)
    assert layout.is_test("x/test_y.py") == ("test_*.py" in patterns)


def test_a_string_testpaths_in_pyproject_is_split_as_pytest_splits_it(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = "a/tests b"\n',
            "a/__init__.py": "",
            "a/tests/test_x.py": "",
            "b/test_y.py": "",
        },
    )
    layout = discover_layout(root, LadderConfig())
    assert layout.test_roots == [root / "a" / "tests", root / "b"]


def test_doctest_text_files_follow_addopts_doctest_glob_inside_packages_too(
    tmp_path: Path,
) -> None:
    root = _write(
        tmp_path,
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n"
            'addopts = ["--doctest-glob", "*.md", "--doctest-glob=*.rst"]\n',
            "app/__init__.py": "",
            "app/tests/guide.md": "",
            "README.md": "",
            "docs/x.rst": "",
            "test_default.txt": "",
            ".venv/pyvenv.cfg": "",
            ".venv/lib/a.md": "",
        },
    )
    layout = discover_layout(root, LadderConfig())
    assert sorted(layout.doctest_files) == ["README.md", "app/tests/guide.md", "docs/x.rst"]
    assert layout.is_test("app/tests/guide.md")
    assert not layout.is_test("test_default.txt")


@pytest.mark.parametrize("off", ['"-p no:doctest --doctest-modules"', '["-p", "no:doctest"]'])
def test_pytests_doctest_plugin_turned_off_collects_no_doctests(tmp_path: Path, off: str) -> None:
    # A selected test*.txt that pytest will not collect is a "file not found" or no test run.
    root = _write(
        tmp_path,
        {
            "pyproject.toml": f"[tool.pytest.ini_options]\naddopts = {off}\n",
            "app/__init__.py": "",
            "test_default.txt": "",
        },
    )
    layout = discover_layout(root, LadderConfig())
    assert layout.doctest_files == {}
    assert not layout.doctest_modules
    assert not layout.runs_as_test("app/__init__.py")
