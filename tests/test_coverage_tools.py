"""tests/habitat_coverage_tools.py: coverage is not started in mypy, dmypy, pip or venv, and is
in every other Python the suite's processes start.

The module is loaded from this checkout by its path: under `import habitat_coverage_tools`
a venv with the hook installed would hand back the copy its .pth imported at start-up.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import coverage
import pytest

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


def test_install_writes_the_module_and_a_pth_read_before_coverages(tmp_path: Path) -> None:
    hook.install(str(tmp_path))
    pth = tmp_path / "a0_habitat_coverage_tools.pth"
    assert pth.read_text(encoding="utf-8") == "import habitat_coverage_tools\n"
    assert sorted([pth.name, "a1_coverage.pth"])[0] == pth.name
    copy = (tmp_path / "habitat_coverage_tools.py").read_text(encoding="utf-8")
    assert copy == SOURCE.read_text(encoding="utf-8")


def _imports_coverage(args: list[str], env: dict[str, str]) -> bool:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return "coverage.control" in done.stderr


def test_a_tool_started_with_coverage_requested_does_not_start_it(tmp_path: Path) -> None:
    """The venv's own hook (`make test` installs it), in real interpreters: coverage starts in
    a Python that runs code of ours and not in `python -m venv`."""
    site = Path(sysconfig.get_path("purelib"))
    installed = site / "habitat_coverage_tools.py"
    if not (site / "a0_habitat_coverage_tools.pth").is_file() or not installed.is_file():
        pytest.skip(f"the hook is not installed in {site} (`make test` installs it)")
    if installed.read_text(encoding="utf-8") != SOURCE.read_text(encoding="utf-8"):
        pytest.skip(f"{installed} is not this checkout's hook (`make test` installs it again)")
    config = coverage.Coverage(data_file=str(tmp_path / ".coverage"), config_file=False).config
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    env["COVERAGE_PROCESS_CONFIG"] = config.serialize()
    assert _imports_coverage(["-c", "pass"], env)
    assert not _imports_coverage(["-m", "venv", "--help"], env)
