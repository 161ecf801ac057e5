from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

import bytecode
import node_tools
import project_venv
import required
import schedule
import session_jobs
import wheel_venv

# bench/'s helpers the tests share (the dashboard's browser, the gauntlet and its malformed
# lines) are imported from there: tests may import bench, bench never imports tests.
_BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path[:0] = [str(_BENCH / "latency"), str(_BENCH / "gauntlet"), str(_BENCH)]


_REQUIRED: list[bool] = []
"""`HABITAT_TEST_REQUIRE`, read once at the start: a test that sets the variable itself
(test_required.py) must not change what the run does with every other test's skips."""


def pytest_configure(config: pytest.Config) -> None:
    _REQUIRED[:] = [required.required()]  # a wrong value stops the run before any test
    # The tests' projects run in a venv of their own, as a user's do (tests/project_venv.py);
    # set here, before any module's host starts, so every host and child inherits it.
    project_python = project_venv.python()
    if project_python is not None:
        os.environ.setdefault("HABITAT_LADDER_PYTHON", str(project_python))
    if not hasattr(config, "workerinput"):  # once, before any xdist worker starts
        bytecode.compile_package()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    schedule.longest_first(config, items)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:  # xdist's WorkerController, on the controller
    schedule.tell_worker(node.config, node.workerinput)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    with bytecode.written():
        return (yield)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    if _REQUIRED and _REQUIRED[0]:
        required.report_skip(outcome.get_result())  # type: ignore[attr-defined]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def habitat_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own state folder; nothing touches the real ~/.local/state."""
    home = tmp_path_factory.mktemp("habitat-home")
    monkeypatch.setenv("HABITAT_HOME", str(home))
    # A warm-up starts dmypy and ruff for every project a test opens; its tests turn it on.
    monkeypatch.setenv("HABITAT_LADDER_WARMUP", "false")
    # No test downloads a type checker from PyPI unless it says so (test_verify_pyright.py).
    monkeypatch.setenv("HABITAT_LADDER_FETCH_CHECKERS", "false")
    return home


@pytest.fixture
def own_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's interpreter chosen as a user's is, without the suite's venv for its
    projects (tests/project_venv.py): the one its pyproject names, its `.venv`, else the
    habitat's own (with the dev venv's pytest plugins, pytest-cov among them)."""
    monkeypatch.delenv("HABITAT_LADDER_PYTHON", raising=False)


@pytest.fixture(scope="session", autouse=True)
def early_jobs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """What a selected test needs once a session and is mostly a wait on a registry (the
    wheel's venv, the conformance suite, the Node tools) starts with the session, in the
    background."""
    items, basetemp = request.session.items, tmp_path_factory.getbasetemp()
    started = [job.start(job.folder(basetemp)) for job in session_jobs.JOBS if job.wanted(items)]
    if wheel_venv.wanted(items):
        started.append(wheel_venv.start(wheel_venv.folder_of(basetemp)))
    started.append(node_tools.start_install(items))
    yield
    stopping = request.session.shouldstop or request.session.shouldfail
    for process in started:
        if process is None:
            continue
        if not stopping:  # a test on another worker may still need it
            try:
                process.wait(timeout=wheel_venv.INSTALL_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        process.kill()
        process.wait()
