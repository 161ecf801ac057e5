"""The dependency recorder's `sys.monitoring` backend (Python 3.12+): a package function is
switched off once it is hot and re-armed at each window boundary, and what it records is
exactly what a callback on every call records (the one-tool path, taken when only one tool
id is free). The suite's own interpreter may be older: a 3.12+ one on PATH runs the nested
pytest (this venv's pytest, pure Python, put on its path); with none, the test says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.verify.select.testdeps import PLUGIN_DIR

_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/hot.py": (
        "def leaf(x):\n    return x + 1\n\n\n"
        "def hot(n):\n    total = 0\n    for i in range(n):\n        total = leaf(total)\n"
        "    return total\n\n\n"
        "def gen(n):\n    for i in range(n):\n        yield leaf(i)\n\n\n"
        "def cold():\n    return 'cold'\n"
    ),
    "tests/conftest.py": (
        "import pytest\n\nfrom pkg.hot import cold, hot\n\n\n"
        "@pytest.fixture\ndef warmed():\n    return hot(50)\n\n\n"
        '@pytest.fixture(scope="session")\ndef once():\n    return cold()\n'
    ),
    "tests/test_hot.py": (
        "from pkg.hot import cold, gen, hot, leaf\n\n\n"
        "def test_a_hot_loop():\n    assert hot(100) == 100\n\n\n"
        "def test_hot_again_after_it_was_switched_off():\n    assert hot(20) == 20\n\n\n"
        "def test_a_generator_resumed_many_times():\n    assert sum(gen(30)) == 465\n\n\n"
        "def test_only_the_leaf():\n    assert leaf(1) == 2\n\n\n"
        "def test_a_fixture_that_ran_hot_code(warmed):\n"
        "    assert warmed == 50\n    assert leaf(0) == 1\n\n\n"
        "def test_a_session_fixture(once):\n    assert once == cold()\n\n\n"
        "def test_nothing_of_the_package():\n    assert True\n"
    ),
}
_BODIES = {
    "pkg/atload.py": "from pkg.hot import hot\n\nTABLE = hot(3)\n",
    "pkg/byhand.py": "from pkg.hot import cold\n\nVALUE = cold()\n",
    "tests/helper_side.py": "from pkg.hot import leaf\n\nONE = leaf(0)\n",
    "tests/test_bodies.py": (
        "import importlib.util\nimport sys\nfrom pathlib import Path\n\n"
        "from pkg.hot import gen\n\n\n"
        "def test_imports_a_package_module_lazily():\n"
        "    import pkg.atload\n\n    assert pkg.atload.TABLE == 3\n"
        "    assert sum(gen(2)) == 3\n\n\n"
        "def test_runs_a_package_module_by_hand():\n"
        '    path = Path(__file__).parent.parent / "pkg" / "byhand.py"\n'
        '    spec = importlib.util.spec_from_file_location("pkg.byhand", path)\n'
        "    module = importlib.util.module_from_spec(spec)\n"
        '    sys.modules["pkg.byhand"] = module\n'
        "    spec.loader.exec_module(module)\n"
        '    assert module.VALUE == "cold"\n\n\n'
        "def test_imports_a_test_side_module_lazily():\n"
        "    import helper_side\n\n    assert helper_side.ONE == 1\n"
    ),
}


def _python_312() -> str | None:
    if sys.version_info >= (3, 12):
        return sys.executable
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found_any = [shutil.which(name) for name in ("python3.13", "python3.12")]
    found_any += [str(p) for p in sorted(pyenv.glob("3.1[2-9]*/bin/python3"), reverse=True)]
    for found in found_any:
        if found:
            done = subprocess.run([found, "-c", "import sys; sys.monitoring"], capture_output=True)
            if done.returncode == 0:
                return found
    return None


def _record(root: Path, python: str, out: Path, *, one_tool: bool) -> dict[str, object]:
    site = next(Path(p) for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(PLUGIN_DIR), str(site)]),
        "HABITAT_TESTDEPS_OUT": str(out),
        "HABITAT_TESTDEPS_ROOT": str(root),
        "HABITAT_TESTDEPS_PACKAGES": str(root / "pkg"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # this venv's plugins are built for its Python
    }
    take = "sys.monitoring.use_tool_id(3, 'other'); " if one_tool else ""
    code = f"import sys; {take}import pytest; sys.exit(pytest.main(sys.argv[1:]))"
    argv = [python, "-c", code, "-q", "-p", "no:cacheprovider", "-p", "habitat_testdeps"]
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = out.glob("deps-*.json")
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_switched_off_when_hot_and_re_armed_per_window_it_records_what_every_call_does(
    tmp_path: Path,
) -> None:
    python = _python_312()
    if python is None:
        pytest.skip("no Python 3.12+ on PATH: the monitoring backend needs one")
    root = tmp_path / "proj"
    for rel, text in _PROJECT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    armed = _record(root, python, tmp_path / "armed", one_tool=False)
    every_call = _record(root, python, tmp_path / "every", one_tool=True)
    assert armed["backend"] == "monitoring"
    assert armed["broken"] is None
    assert armed == every_call
    tests = armed["tests"]
    assert isinstance(tests, dict)

    def names(test: str) -> set[int]:
        return {line for _, line in tests[f"tests/test_hot.py::{test}"]["codes"]}

    leaf, hot, gen, cold = 1, 5, 12, 17  # first lines in pkg/hot.py
    assert names("test_a_hot_loop") == {hot, leaf}
    # leaf was switched off in the test before (called 100 times): re-armed for this one.
    assert names("test_hot_again_after_it_was_switched_off") == {hot, leaf}
    assert names("test_a_generator_resumed_many_times") == {gen, leaf}
    assert names("test_only_the_leaf") == {leaf}
    assert names("test_a_fixture_that_ran_hot_code") == {hot, leaf}
    assert names("test_a_session_fixture") == {cold}
    assert names("test_nothing_of_the_package") == set()


def test_code_a_module_body_runs_inside_a_test_is_import_time_code_with_or_without_a_lock(
    tmp_path: Path,
) -> None:
    """The stack is walked for the module body a function runs under only while one may be
    running: an import holds importlib's module lock while its body runs, and a body run
    without one (`exec_module` by hand, pytest's `--import-mode=importlib`) marks the
    window as it begins. Both still record what those bodies ran as import-time code."""
    python = _python_312()
    if python is None:
        pytest.skip("no Python 3.12+ on PATH: the monitoring backend needs one")
    root = tmp_path / "proj"
    for rel, text in {**_PROJECT, **_BODIES}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    armed = _record(root, python, tmp_path / "armed", one_tool=False)
    every_call = _record(root, python, tmp_path / "every", one_tool=True)
    assert armed["broken"] is None
    assert armed == every_call
    tests, imports, modules = armed["tests"], armed["imports"], armed["modules"]
    assert isinstance(tests, dict)
    assert isinstance(imports, list)
    assert isinstance(modules, dict)

    def names(test: str) -> set[int]:
        return {line for _, line in tests[f"tests/test_bodies.py::{test}"]["codes"]}

    leaf, hot, gen, cold = 1, 5, 12, 17  # first lines in pkg/hot.py
    at_import = {line for rel, line in imports if rel == "pkg/hot.py"}
    # pkg/atload.py's body ran hot (and leaf) under the import's lock; pkg/byhand.py's ran
    # cold with no lock held: both are import-time code, not the tests'.
    assert {hot, leaf, cold} <= at_import
    assert names("test_imports_a_package_module_lazily") == {gen}  # leaf: seen in the body
    assert names("test_runs_a_package_module_by_hand") == set()
    # A test-side module's body is that file's.
    assert [["pkg/hot.py", leaf]] == modules["tests/helper_side.py"]
    assert names("test_imports_a_test_side_module_lazily") == set()
