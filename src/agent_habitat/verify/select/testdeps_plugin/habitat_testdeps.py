"""pytest plugin: which project code each test executed (loaded by `test.full` as
`-p habitat_testdeps`, from a folder put on PYTHONPATH for that one process).

It runs in the project's interpreter, so it imports nothing from agent_habitat and nothing
outside the standard library but pytest. This module holds the hooks and when recording
starts; the recorder is habitat_testdeps_recorder.py, a top-level module from the same folder
(named with the plugin's prefix: it cannot shadow a module of the project).

The recorder records code objects, not lines: each function of the project's packages that
starts (or resumes) while a test runs is noted once per test, as (file, first line). With
`sys.monitoring` (Python 3.12+) two tools: one global, which sees each function's first start
once and switches it off for good (code outside the packages costs nothing after that), and
one armed on the packages' functions alone, each switched off once hot (its 8th start since
the last window boundary: a re-arm costs a few callbacks) and re-armed at the next window's
start or end (`set_local_events` on that function only), so a hot loop costs a few callbacks
per window, not one per call (soupsieve's matcher: the suite's CPU 1.9x plain pytest with a
callback per call, 1.2x armed); with fewer than two free tool ids the one global tool fires
on every call of a package function; older interpreters use `sys.setprofile`.

Windows: a test's protocol (setup, call, teardown), each fixture's setup (so a test that
reuses a session fixture another test set up still depends on what the fixture ran), and
each collector's collection. Code that runs while a module body executes is import-time
code: inside a package module's body it goes to `imports` (its change must select every
importer), inside a test-side file's body to `modules[file]`. Code outside every window
goes to `imports` too. Which module body a function runs under is found by walking the
stack, and only while one may be running (`Recorder._may_import`): most notes come from
tests, where none is. Output: one JSON file per process in `$HABITAT_TESTDEPS_OUT`.
"""

from __future__ import annotations

import os
import sys
from types import FrameType
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # mypy reads this folder as part of agent_habitat's source tree
    from agent_habitat.verify.select.testdeps_plugin.habitat_testdeps_recorder import Recorder
else:  # the test process: this folder is on PYTHONPATH, the recorder a top-level module
    from habitat_testdeps_recorder import Recorder

_OUT = "HABITAT_TESTDEPS_OUT"
_ROOT = "HABITAT_TESTDEPS_ROOT"
_PACKAGES = "HABITAT_TESTDEPS_PACKAGES"
_getframe = sys._getframe  # kept: a test may monkeypatch `sys` itself
_FAILED_PATH = os.environ.get("HABITAT_TESTDEPS_FAILED")
"""Where the node id of each failure goes as it happens (read at import: a test may change
the environment): the habitat asks HEAD about it while the rest of the run goes on."""
_failed_fd: int | None = None

_SPAWNS = frozenset(
    ("subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.exec", "os.fork")
)
"""Audit events of a process started: what it runs (`python -m slugify`, a fork's child) is
not recorded, so the test's record cannot say what of the project it ran."""


def _audit(event: str, args: tuple[object, ...]) -> None:
    rec = _RECORDER
    if rec is not None and event in _SPAWNS:
        for window in rec.stack:
            window.spawned = True


_RECORDER: Recorder | None = None
_AUDITING = False
_CO_GENERATOR = 0x20


def _base() -> FrameType | None:
    """The frame that stays on the stack while the hook's inner implementations run: the
    first caller of the hookwrapper generator that is not itself a suspended generator."""
    f: FrameType | None = _getframe(2)
    while f is not None and f.f_code.co_flags & _CO_GENERATOR:
        f = f.f_back
    return f


def _start(rootpath: str | None) -> None:
    global _RECORDER, _AUDITING
    out = os.environ.get(_OUT)
    root = os.environ.get(_ROOT) or rootpath
    if not out or not root or _RECORDER is not None:
        return
    packages = os.environ.get(_PACKAGES, "").split(os.pathsep)
    _RECORDER = Recorder(root, packages, out)
    # What was imported before the recorder started (pytest's own start, plugins) counts as
    # loaded: a later change to its import-time code must reach its importers.
    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if isinstance(filename, str):
            _RECORDER.where(filename)
    _RECORDER.start()
    if not _AUDITING:  # an audit hook stays for the process's life: added once
        sys.addaudithook(_audit)
        _AUDITING = True


def pytest_configure(config: pytest.Config) -> None:
    _start(str(config.rootpath))


# Started when `-p habitat_testdeps` imports it, before pytest loads the conftests: what
# they import and run at import time is recorded too (as import-time code).
_start(None)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _RECORDER
    if _RECORDER is None:
        return
    _RECORDER.stop()
    _RECORDER.dump(str(config.rootpath))
    _RECORDER = None


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    rec = _RECORDER
    if rec is None:
        yield
        return
    path = str(getattr(collector, "path", "") or "")
    hit = rec.where(path) if path.endswith(".py") else None
    key = "" if hit is None or hit[1] else hit[0]
    window = rec.push(key, _base())
    try:
        yield
    finally:
        codes = rec.pop(window)
        if key:
            rec.modules.setdefault(key, set()).update(codes)
        else:
            rec.imports.update(codes)


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Any:
    rec = _RECORDER
    if rec is None:
        yield
        return
    window = rec.push(f"fixture:{fixturedef.argname}", _base())
    try:
        yield
    finally:
        codes = rec.pop(window)
        if getattr(fixturedef, "scope", "function") != "function":
            rec.fixtures.setdefault(fixturedef.argname, set()).update(codes)
            if window.spawned:
                rec.spawning.add(fixturedef.argname)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    rec = _RECORDER
    if rec is None:
        yield
        return
    window = rec.push(item.nodeid, _base())
    entry: dict[str, Any] = rec.tests.setdefault(item.nodeid, {"failed": False})
    try:
        yield
    finally:
        codes = rec.pop(window)
        hit = rec.where(str(item.path))
        entry["file"] = hit[0] if hit else None
        entry["codes"] = [[rel, line] for rel, line in sorted(codes)]
        entry["fixtures"] = sorted(getattr(item, "fixturenames", []))
        if window.spawned:
            entry["spawned"] = True


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed and _FAILED_PATH:
        _tell_failed(report.nodeid, str(report.location[0]))
    if _RECORDER is not None and (report.failed or report.skipped):
        _RECORDER.tests.setdefault(report.nodeid, {})["failed" if report.failed else "skipped"] = (
            True
        )


def _tell_failed(nodeid: str, file: str) -> None:
    """One line per failed report (a test's setup, call or teardown), appended: its node id
    and the file its function is in (which the junit report names), tab-separated. Each
    write is a whole line, also from xdist's workers (the controller repeats theirs)."""
    global _failed_fd
    line = f"{nodeid}\t{file}"
    if "\n" in line or line.count("\t") != 1:
        return  # not one line of two fields: HEAD is asked about it after the run, as before
    try:
        if _failed_fd is None:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            _failed_fd = os.open(str(_FAILED_PATH), flags, 0o600)
        os.write(_failed_fd, (line + "\n").encode("utf-8", "surrogateescape"))
    except OSError:
        pass  # never break the user's test run: HEAD is asked after it instead
