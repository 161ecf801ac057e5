"""CPU seconds per test module, of the module's whole process tree: a pytest plugin.

`PYTHONPATH=tests .venv/bin/python -m pytest -p cpu_by_module -n 4 --dist loadfile ...`
(or without xdist). Each module's tests run with their worker in a cpuacct cgroup of the
module's own, and every process they start (hosts, CLI calls, tools, daemons that outlive
the test) is born into it, as the kernel counts a cgroup's CPU whoever reaps the process.
At the end the table, longest first, and the total; under xdist the controller prints it.
Needs a writable cgroup v1 `cpuacct` hierarchy (root, most Linux boxes with cgroup v1);
anywhere else it says why and measures nothing. The groups stay behind while a process
started by a test still runs in one; `rmdir` them later.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

__all__ = ["cpu_seconds"]

_HIERARCHY = Path("/sys/fs/cgroup/cpuacct")
_VARIABLE = "HABITAT_CPU_BY_MODULE"
_SHOWN = 40
_current: list[str] = []
_moving: list[bool] = []
"""Whether this process runs tests (a worker, or pytest without xdist): xdist's controller
is told of its workers' tests too, and stays where it is."""


def cpu_seconds(run: Path) -> dict[str, float]:
    """CPU seconds of each module's group under `run`."""
    return {
        group.name.replace("~", "/"): int((group / "cpuacct.usage").read_text()) / 1e9
        for group in run.iterdir()
        if (group / "cpuacct.usage").exists()
    }


def pytest_configure(config: pytest.Config) -> None:
    worker = hasattr(config, "workerinput")
    _moving[:] = [worker or config.getoption("dist", "no") == "no"]
    if worker:
        return  # the controller made the run's folder and passed it in the environment
    run = _HIERARCHY / f"habitat-cpu-{os.getpid()}"
    try:
        run.mkdir()
    except OSError as exc:
        config.issue_config_time_warning(
            pytest.PytestConfigWarning(f"cpu_by_module: no cpuacct cgroup at {run}: {exc}"), 2
        )
        return
    os.environ[_VARIABLE] = str(run)


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    run = os.environ.get(_VARIABLE)
    module = nodeid.split("::", 1)[0]
    if run is None or not _moving[0] or _current == [module]:
        return
    _current[:] = [module]
    group = Path(run) / re.sub(r"[^\w.-]", "~", module)
    group.mkdir(exist_ok=True)
    (group / "cgroup.procs").write_text(str(os.getpid()))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    run = os.environ.get(_VARIABLE)
    if run is None or hasattr(terminalreporter.config, "workerinput"):
        return
    spent = cpu_seconds(Path(run))
    terminalreporter.section(f"CPU seconds per test module ({run})")
    terminalreporter.write_line(f"{sum(spent.values()):8.1f}  total, {len(spent)} modules")
    for module, seconds in sorted(spent.items(), key=lambda kv: -kv[1])[:_SHOWN]:
        terminalreporter.write_line(f"{seconds:8.1f}  {module}")
