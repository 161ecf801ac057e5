"""tests/habitat_coverage_tools.py: coverage is not started in mypy, dmypy, pip or venv; in
every other Python the suite's processes start it is started before the first line of
agent_habitat's code runs, and only then.

The module is loaded from this checkout by its path: under `import habitat_coverage_tools`
a venv with the hook installed would hand back the copy its .pth imported at start-up.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import coverage
import pytest

import agent_habitat.errors

SOURCE = Path(__file__).with_name("habitat_coverage_tools.py")
_spec = importlib.util.spec_from_file_location("habitat_coverage_tools_checkout", SOURCE)
assert _spec is not None
assert _spec.loader is not None
hook = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hook)

PY = "/venv/bin/python"


@pytest.mark.parametrize(
    ("argv", "tool"),
    [
        # what the ladder's rungs, the environments and the suite's helpers start
        ([PY, "-m", "mypy", "--cache-dir", "c", "src/calc/arith.py"], "mypy"),
        (
            [PY, "-P", "-m", "mypy.dmypy", "--status-file", "s.json", "run", "--", "-p", "x"],
            "mypy.dmypy",
        ),
        ([PY, "/venv/bin/dmypy", "run"], "dmypy"),
        ([PY, "-m", "pip", "--python", "/v/bin/python", "install", "-q", "x.whl"], "pip"),
        ([PY, "-m", "venv", "--without-pip", "/tmp/v"], "venv"),
        ([PY, "-X", "dev", "-W", "ignore", "-mpip", "list"], "pip"),
        ([PY, "-I", "/venv/bin/pip3.11", "list"], "pip3"),
        # ours, or a project's own code: measured
        ([PY, "-m", "agent_habitat.host", "--project", "p"], None),
        ([PY, "-m", "pytest", "-q", "--no-cov", "-p", "habitat_testdeps", "tests"], None),
        ([PY, "/src/agent_habitat/verify/pytest_zygote/habitat_pytest_zygote.py", "a"], None),
        ([PY, "-c", "import mypy"], None),
        ([PY, "-m", "mypyish"], None),
        ([PY, "/venv/bin/habitat", "run", "mypy"], None),
        ([PY, "-", "mypy"], None),
        ([PY], None),
    ],
)
def test_a_tool_is_known_by_its_command_line(argv: list[str], tool: str | None) -> None:
    assert hook.tool_of(argv) == tool


@pytest.mark.parametrize(
    ("argv", "harness"),
    [
        ([PY, "-c", "from agent_habitat.cli import main"], True),
        ([PY, "-X", "dev", "-cimport agent_habitat"], True),
        ([PY, "-m", "agent_habitat", "run", "-c"], False),
        ([PY, "-m", "agent_habitat.host", "--project", "p"], False),
        ([PY, "/venv/bin/habitat", "mcp", "-c"], False),
        ([PY, "/src/agent_habitat/verify/pytest_zygote/habitat_pytest_zygote.py", "a"], False),
        ([PY, "-", "-c"], False),
        ([PY], False),
    ],
)
def test_the_suites_own_python_c_harness_is_known_by_its_command_line(
    argv: list[str], harness: bool
) -> None:
    assert hook.harness_of(argv) == harness


def test_install_writes_the_module_and_pths_read_around_coverages(tmp_path: Path) -> None:
    hook.install(str(tmp_path))
    before, after = (
        tmp_path / "a0_habitat_coverage_tools.pth",
        tmp_path / "a2_habitat_coverage_tools.pth",
    )
    assert before.read_text(encoding="utf-8").startswith("import habitat_coverage_tools; ")
    assert after.read_text(encoding="utf-8").startswith("import habitat_coverage_tools; ")
    assert sorted([after.name, "a1_coverage.pth", before.name]) == [
        before.name,
        "a1_coverage.pth",
        after.name,
    ]
    copy = (tmp_path / "habitat_coverage_tools.py").read_text(encoding="utf-8")
    assert copy == SOURCE.read_text(encoding="utf-8")


_REPORT = (
    "import json, os, sys\n"
    "print(json.dumps(['coverage.control' in sys.modules,\n"
    "                  'COVERAGE_PROCESS_CONFIG' in os.environ]))"
)


def _script(tmp_path: Path, code: str) -> str:
    """`code` as a script's path: a `python -c` string is the suite's harness, not measured."""
    script = tmp_path / "script.py"
    script.write_text(code, encoding="utf-8")
    return str(script)


def _run(args: list[str], env: dict[str, str]) -> tuple[bool, bool]:
    """Whether the interpreter imported coverage, and whether its environment (its
    children's) still asks for it, as `args` leaves them at exit."""
    done = subprocess.run(
        [sys.executable, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    imported, asked = json.loads(done.stdout.splitlines()[-1])
    return imported, asked


@pytest.fixture
def requested(tmp_path: Path) -> dict[str, str]:
    """An environment that asks coverage to measure agent_habitat in every Python, with the
    venv's own hook (`make test` installs it)."""
    site = Path(sysconfig.get_path("purelib"))
    installed = site / "habitat_coverage_tools.py"
    for pth in ("a0_habitat_coverage_tools.pth", "a2_habitat_coverage_tools.pth"):
        if not (site / pth).is_file() or not installed.is_file():
            pytest.skip(f"the hook is not installed in {site} (`make test` installs it)")
    if installed.read_text(encoding="utf-8") != SOURCE.read_text(encoding="utf-8"):
        pytest.skip(f"{installed} is not this checkout's hook (`make test` installs it again)")
    data = tmp_path / ".coverage"
    config = coverage.Coverage(
        data_file=str(data), config_file=False, source=["agent_habitat"], branch=True
    ).config
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    env["COVERAGE_PROCESS_CONFIG"] = config.serialize()
    return env


def test_a_tool_started_with_coverage_requested_does_not_start_it(
    requested: dict[str, str],
) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "venv", "--help"],
        env=requested,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "coverage.control" not in done.stderr


def test_a_python_that_runs_none_of_our_code_does_not_start_coverage_nor_hide_it(
    requested: dict[str, str], tmp_path: Path
) -> None:
    """A tab's `python3 -c`, a project's own tests: nothing to measure, and their children
    are asked to measure as before."""
    assert _run(["-c", _REPORT], requested) == (False, True)
    assert not list(tmp_path.glob(".coverage*"))


@pytest.mark.parametrize(
    "code",
    [
        "import agent_habitat.errors",
        # a module of ours loaded without import's finders (as pytest's rewriter loads a `-p`
        # plugin): its body's `exec` is what starts coverage
        "import importlib.util as u\n"
        "spec = u.spec_from_file_location('agent_habitat.errors', sys.argv[1])\n"
        "spec.loader.exec_module(u.module_from_spec(spec))",
    ],
)
def test_coverage_starts_before_the_first_line_of_ours_runs(
    requested: dict[str, str], tmp_path: Path, code: str
) -> None:
    errors = Path(agent_habitat.errors.__file__)
    script = _script(tmp_path, f"import sys\n{code}\n{_REPORT}")
    imported, asked = _run([script, str(errors)], requested)
    assert (imported, asked) == (True, True)
    data = coverage.CoverageData(basename=str(tmp_path / ".coverage"))
    data.read()
    measured = {Path(name).resolve() for name in data.measured_files()}
    assert errors.resolve() in measured
    lines = data.lines(str(next(n for n in data.measured_files() if Path(n).name == "errors.py")))
    first = next(
        i
        for i, line in enumerate(errors.read_text(encoding="utf-8").splitlines(), 1)
        if line.startswith(("from ", "import "))
    )
    assert lines is not None
    assert first in lines, "the module's first statement ran under coverage"


def test_a_script_of_ours_leaves_coverage_to_start_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The warm pytest's zygote runs by its path: coverage's own .pth starts it, as before."""
    zygote = Path(agent_habitat.errors.__file__).parent / "verify/pytest_zygote"
    script = zygote / "habitat_pytest_zygote.py"
    assert script.is_file()
    monkeypatch.setattr(sys, "orig_argv", [PY, "-u", str(script), "address"])
    monkeypatch.setenv("COVERAGE_PROCESS_CONFIG", "config")
    hook.hold()
    assert os.environ["COVERAGE_PROCESS_CONFIG"] == "config"
    assert hook._held == {}


def test_a_python_whose_coverage_already_runs_gets_no_second_one(
    requested: dict[str, str], tmp_path: Path
) -> None:
    """An xdist worker: pytest-cov starts its own coverage, then the worker imports a module
    of ours. A second coverage started there sat on top of pytest-cov's, whose stop then
    failed ("Expected current collector to be …"): an INTERNALERROR that lost a worker's
    tests in a whole-suite run."""
    own = tmp_path / "own.coverage"
    code = (
        "import coverage, sys\n"
        f"cov = coverage.Coverage(data_file={str(own)!r}, config_file=False,\n"
        "                         source=['agent_habitat'])\n"
        "cov.start()\n"
        "import agent_habitat.errors\n"
        "cov.stop()\n"
        "cov.save()\n"
        f"{_REPORT}"
    )
    assert _run([_script(tmp_path, code)], requested) == (True, True)
    data = coverage.CoverageData(basename=str(own))
    data.read()
    assert any(Path(name).name == "errors.py" for name in data.measured_files())


def test_a_python_c_of_ours_is_not_measured_and_its_children_are(
    requested: dict[str, str], tmp_path: Path
) -> None:
    """A test's CLI probe: no coverage in it, and the hosts and CLIs it starts are asked to
    measure as before."""
    assert _run(["-c", f"import agent_habitat.errors\n{_REPORT}"], requested) == (False, True)
    assert not list(tmp_path.glob(".coverage*"))
