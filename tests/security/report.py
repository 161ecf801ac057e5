"""`make security`'s report: one line per check, PASS or FAIL and its name as a sentence,
then `N/M passed`.

A pytest plugin (`-p security.report`): the checks are the tests under tests/security,
and a test's name is its sentence (`test_a_fifo_never_hangs_file_write` → "a fifo never
hangs file write"). A skipped check is listed as SKIP with its reason and never counted
as passed.
"""

from __future__ import annotations

import pytest

_results: dict[str, tuple[str, str]] = {}


def _sentence(item_name: str) -> str:
    name, _, params = item_name.partition("[")
    words = name.removeprefix("test_").replace("_", " ")
    return f"{words} [{params}" if params else words


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    name = _sentence(report.location[2])
    if report.failed:
        _results[name] = ("FAIL", "")
    elif report.skipped and name not in _results:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
        _results[name] = ("SKIP", str(reason).removeprefix("Skipped: "))
    elif report.when == "call" and report.passed and name not in _results:
        _results[name] = ("PASS", "")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    write = terminalreporter.write_line
    write("")
    for name, (verdict, why) in _results.items():
        write(f"{verdict}  {name}" + (f" — {why}" if why else ""))
    passed = sum(1 for verdict, _ in _results.values() if verdict == "PASS")
    skipped = sum(1 for verdict, _ in _results.values() if verdict == "SKIP")
    write(f"{passed}/{len(_results)} passed" + (f", {skipped} skipped" if skipped else ""))
