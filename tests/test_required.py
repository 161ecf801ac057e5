"""`HABITAT_TEST_REQUIRE=all` (tests/required.py): a skip becomes a failure naming why; a
strict xfail and a pass are left alone; a wrong value stops the run."""

from __future__ import annotations

from typing import Literal

import pytest

import required


def _report(
    outcome: Literal["passed", "skipped"], longrepr: tuple[str, int, str] | None, **extra: object
) -> pytest.TestReport:
    report = pytest.TestReport(
        "t.py::test_x", ("t.py", 1, "test_x"), {}, outcome, longrepr, "setup"
    )
    for name, value in extra.items():
        setattr(report, name, value)
    return report


def test_a_skip_becomes_a_failure_that_names_what_was_missing() -> None:
    report = _report("skipped", ("t.py", 3, "Skipped: zsh is not installed here"))
    required.report_skip(report)
    assert report.outcome == "failed"
    assert "(zsh is not installed here)" in str(report.longrepr)
    assert "HABITAT_TEST_REQUIRE=all" in str(report.longrepr)


def test_a_strict_xfail_and_a_pass_are_left_as_they_are() -> None:
    xfailed = _report("skipped", None, wasxfail="known")
    passed = _report("passed", None)
    required.report_skip(xfailed)
    required.report_skip(passed)
    assert (xfailed.outcome, passed.outcome) == ("skipped", "passed")


@pytest.mark.parametrize(("value", "wanted"), [("", False), ("all", True), (" all ", True)])
def test_the_variable_reads_all_or_nothing(
    monkeypatch: pytest.MonkeyPatch, value: str, wanted: bool
) -> None:
    monkeypatch.setenv(required.VARIABLE, value)
    assert required.required() is wanted


def test_any_other_value_is_refused_naming_the_variable_and_its_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(required.VARIABLE, "yes")
    with pytest.raises(pytest.UsageError, match=r"HABITAT_TEST_REQUIRE='yes': set it to `all`"):
        required.required()
