"""`make security`'s report: issue 23's findings, each with its checks (PASS or FAIL and the
check's name as a sentence), then `N/M passed`.

A pytest plugin (`-p security.report`): the checks are the tests marked
`@pytest.mark.finding("key")` (tests/security, and the few elsewhere the Makefile names),
and a test's name is its sentence (`test_a_fifo_never_hangs_file_write` → "a fifo never
hangs file write"). A finding is PASS only when it has checks and every one passed; one
without a check is listed as FAIL, "no check". A skipped check is listed as SKIP with its
reason and never counted as passed. A test in the run without a known finding is an error.
"""

from __future__ import annotations

import pytest

from .findings import FINDINGS

_KEYS = {finding.key for finding in FINDINGS}
_finding_of: dict[str, str] = {}
_results: dict[str, tuple[str, str]] = {}


def _sentence(item_name: str) -> str:
    name, _, params = item_name.partition("[")
    words = name.removeprefix("test_").replace("_", " ")
    return f"{words} [{params}" if params else words


@pytest.hookimpl(trylast=True)  # after `-m finding` deselected the rest of a file
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    unknown: list[str] = []
    for item in items:
        marker = item.get_closest_marker("finding")
        key = marker.args[0] if marker is not None and marker.args else None
        if key not in _KEYS:
            unknown.append(f"{item.nodeid} ({'no finding' if key is None else repr(key)})")
            continue
        _finding_of[item.nodeid] = str(key)
    if unknown:
        raise pytest.UsageError(
            "every security check names one of issue 23's findings "
            f"(tests/security/findings.py): {', '.join(unknown)}"
        )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    nodeid = report.nodeid
    if report.failed:
        _results[nodeid] = ("FAIL", "")
    elif report.skipped and nodeid not in _results:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
        _results[nodeid] = ("SKIP", str(reason).removeprefix("Skipped: "))
    elif report.when == "call" and report.passed and nodeid not in _results:
        _results[nodeid] = ("PASS", "")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    write = terminalreporter.write_line
    write("")
    findings_passed = 0
    for finding in FINDINGS:
        checks = [
            (verdict, why, _sentence(nodeid.rpartition("::")[2]))
            for nodeid, (verdict, why) in _results.items()
            if _finding_of.get(nodeid) == finding.key
        ]
        passed = sum(1 for verdict, _, _ in checks if verdict == "PASS")
        verdict = "PASS" if checks and passed == len(checks) else "FAIL"
        findings_passed += verdict == "PASS"
        counted = f"{passed}/{len(checks)} checks passed" if checks else "no check"
        write(f"{verdict}  {finding.severity:<6}  {finding.title}: {counted}")
        for check, why, name in checks:
            write(f"    {check}  {name}" + (f" — {why}" if why else ""))
    passed = sum(1 for verdict, _ in _results.values() if verdict == "PASS")
    skipped = sum(1 for verdict, _ in _results.values() if verdict == "SKIP")
    write(f"findings: {findings_passed}/{len(FINDINGS)} passed")
    write(f"{passed}/{len(_results)} passed" + (f", {skipped} skipped" if skipped else ""))
