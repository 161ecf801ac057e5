"""A collection error raised by the project's own code is red, naming the frame in the
project that raised; the environment failing is `error`. Real pytest on the sample."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_habitat.cli.demo_sample import break_sample, build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, RungResult, run_ladder, stop_type_daemon
from agent_habitat.verify.tracebacks import start_failure
from git_tree import IGNORED, commit_tree, ladder_pyproject
from git_tree import git as _git

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture
async def calc(tmp_path: Path) -> AsyncIterator[Path]:
    root = build_sample(tmp_path / "calc")
    yield root
    await stop_type_daemon(root)


async def _scoped(root: Path, **request: object) -> RungResult:
    ladder = LadderRequest.model_validate({"rungs": ["test.scoped"], **request})
    result = await run_ladder(root, ladder, bus=InMemoryEventBus(str(root)))
    (only,) = result.rungs
    return only


def _raised_in_report(result: RungResult) -> None:
    assert result.state == "red", result
    (diag,) = result.diagnostics
    assert (diag.file, diag.line, diag.code) == ("src/calc/report.py", 5, "ValueError")
    assert "invalid literal for int()" in diag.message
    assert "raised at src/calc/report.py:5" in diag.message
    assert result.reason is not None
    assert result.reason.startswith("1 collection error(s), first ")


async def test_a_module_level_error_in_a_changed_file_is_red_at_its_frame(calc: Path) -> None:
    break_sample(calc, "import")
    _raised_in_report(await _scoped(calc))


async def test_a_collection_error_of_tests_named_by_node_id_is_red_not_error(calc: Path) -> None:
    # Node ids (as recorded selection gives them) make pytest exit 4, not 2.
    break_sample(calc, "import")
    _raised_in_report(await _scoped(calc, filter=["tests/test_report.py::test_total"]))


async def test_a_conftest_importing_the_broken_module_is_red_at_its_frame(calc: Path) -> None:
    conftest = calc / "tests" / "conftest.py"
    conftest.write_text("from calc import report  # noqa: F401\n", encoding="utf-8")
    _git(calc, "commit", "-qam", "the conftest imports the report")
    break_sample(calc, "import")
    result = await _scoped(calc)
    assert result.exit_code == 4
    _raised_in_report(result)
    assert "tests/conftest.py: collection error: ValueError" in result.diagnostics[0].message


async def test_a_conftest_importing_a_package_not_installed_is_an_environment_error(
    calc: Path,
) -> None:
    conftest = calc / "tests" / "conftest.py"
    conftest.write_text("import habitat_not_installed_anywhere\n", encoding="utf-8")
    result = await _scoped(calc)
    assert (result.state, result.exit_code) == ("error", 4), result
    assert result.reason is not None
    assert "No module named 'habitat_not_installed_anywhere'" in result.reason


_PKG = "habitat_srcred_pkg"  # a src/ layout package, never installed in this interpreter


def _not_installed_project(root: Path) -> Path:
    return commit_tree(
        root,
        {
            ".gitignore": IGNORED,
            "pyproject.toml": ladder_pyproject(_PKG),
            f"src/{_PKG}/__init__.py": "# the package\ndef f() -> int:\n    return 1\n",
            "tests/test_pkg.py": f"import {_PKG}\n\n\ndef test_f() -> None:\n"
            f"    assert {_PKG}.f() == 1\n",
        },
    )


@pytest.mark.usefixtures("own_interpreter")
@pytest.mark.parametrize(
    "edit",
    [("# the package", "# the package, said better"), ("return 1", "return 2")],
    ids=["comment", "code"],
)
async def test_a_project_pytest_cannot_import_is_an_environment_error_never_red(
    tmp_path: Path, edit: tuple[str, str]
) -> None:
    # src/ layout, not installed, no pythonpath: every test module fails to import the
    # package, at HEAD too, so no edit (a comment, a real one) is red for it. A comment is
    # the same code as HEAD: no test can run differently, so none runs (selection.py).
    root = _not_installed_project(tmp_path / "p")
    init = root / "src" / _PKG / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8").replace(*edit), encoding="utf-8")
    try:
        result = await _scoped(root)
    finally:
        await stop_type_daemon(root)
    if edit[0].startswith("#"):
        assert result.state == "skipped", result
        assert result.reason is not None
        assert "no test is affected" in result.reason
        return
    assert result.state == "error", result
    assert result.reason is not None
    assert "the project is not importable" in result.reason
    assert f"No module named '{_PKG}'" in result.reason
    assert f"{sys.executable} -m pip install -e ." in result.reason
    assert not result.diagnostics


async def test_a_test_importing_a_submodule_the_change_removed_stays_red(tmp_path: Path) -> None:
    # The package imports (pythonpath set); a module of it the change deleted is the code's.
    root = _not_installed_project(tmp_path / "p")
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text + '\n[tool.pytest.ini_options]\npythonpath = ["src"]\n', "utf-8")
    (root / "src" / _PKG / "extra.py").write_text("X = 1\n", encoding="utf-8")
    (root / "tests" / "test_extra.py").write_text(
        f"from {_PKG}.extra import X\n\n\ndef test_x() -> None:\n    assert X == 1\n",
        encoding="utf-8",
    )
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "pythonpath and extra")
    (root / "src" / _PKG / "extra.py").unlink()
    try:
        result = await _scoped(root)
    finally:
        await stop_type_daemon(root)
    assert result.state == "red", result
    assert f"No module named '{_PKG}.extra'" in (result.reason or "")


def _env_whose_pytest_cannot_start(where: Path) -> Path:
    """A real venv whose installed pytest fails at import, as pytest 3.2 does on Python 3.10+
    (`from UserDict import DictMixin`): pip resolves that old pytest for a project whose
    version it reads as 0.1.dev (an sdist put under `git init`, setuptools_scm)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    package = Path(purelib) / "pytest"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "try:\n    from collections import MutableMapping\n"
        "except ImportError:\n    from UserDict import DictMixin\n",
        encoding="utf-8",
    )
    (package / "__main__.py").write_text("import pytest\n", encoding="utf-8")
    return python


@pytest.mark.usefixtures("own_interpreter")
async def test_a_pytest_that_cannot_start_is_an_environment_error_not_red(tmp_path: Path) -> None:
    # Exit 1, no report, no test named: nothing ran, so nothing the change did is red.
    python = _env_whose_pytest_cannot_start(tmp_path / "env")
    root = build_sample(tmp_path / "calc", python=str(python))
    text = root / "src" / "calc" / "text.py"
    text.write_text(text.read_text(encoding="utf-8") + "\n\nLOUD = True\n", encoding="utf-8")
    try:
        result = await _scoped(root)
    finally:
        await stop_type_daemon(root)
    assert (result.state, result.exit_code) == ("error", 1), result
    assert result.reason is not None
    assert "pytest could not start" in result.reason
    assert "No module named 'UserDict'" in result.reason
    assert not result.diagnostics


def test_a_start_failure_raised_in_the_project_is_located_there(tmp_path: Path) -> None:
    # pytest imports pluggy at start: a change breaking pluggy's own source stops pytest
    # there, which is the change's doing (red at that frame), not the environment's.
    (tmp_path / "src" / "pluggy").mkdir(parents=True)
    (tmp_path / "src" / "pluggy" / "_hooks.py").write_text("x = (\n", encoding="utf-8")
    site = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    text = (
        "Traceback (most recent call last):\n"
        '  File "<frozen runpy>", line 198, in _run_module_as_main\n'
        f'  File "{site}/pytest/__init__.py", line 8, in <module>\n'
        "    from _pytest import main\n"
        f'  File "{tmp_path}/src/pluggy/_hooks.py", line 1, in <module>\n'
        "    x = (\n"
        "SyntaxError: '(' was never closed\n"
    )
    failure = start_failure(text, tmp_path)
    assert failure is not None
    found = failure.diagnostic()
    assert found is not None
    assert (found.file, found.line, found.code) == ("src/pluggy/_hooks.py", 1, "SyntaxError")
    assert "pytest could not start: SyntaxError" in found.message
    only_installed = text.replace(f"{tmp_path}/src/pluggy", f"{site}/pluggy")
    elsewhere = start_failure(only_installed, tmp_path)
    assert elsewhere is not None
    assert elsewhere.diagnostic() is None
    assert start_failure("....\n2 failed\n", tmp_path) is None
