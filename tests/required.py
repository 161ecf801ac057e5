"""`HABITAT_TEST_REQUIRE=all` (the Makefile's test target sets it under CI): a test that
would skip because something it needs is missing here (zsh, fish, Chromium, axe-core, Node
and the conformance suite, the wheel's index, root for a tmpfs, cgroups, cargo, go) fails
instead, naming what was missing. Every skip goes through `report_skip`, whichever way it
was raised (`pytest.skip`, a `skipif` marker, a helper in bench/), so a new skip cannot
slip past CI either. Unset or empty: skips stay skips, saying why.

Imported as `required`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

import os

import pytest

__all__ = ["VARIABLE", "report_skip", "required"]

VARIABLE = "HABITAT_TEST_REQUIRE"


def required() -> bool:
    """Whether a missing dependency fails the test (`HABITAT_TEST_REQUIRE=all`)."""
    value = os.environ.get(VARIABLE, "").strip()
    if value in ("", "all"):
        return value == "all"
    raise pytest.UsageError(
        f"{VARIABLE}={value!r}: set it to `all` (a missing dependency fails the test)"
        " or leave it unset"
    )


def report_skip(report: pytest.TestReport) -> None:
    """Turn a skipped test's report into a failure that names why it would have skipped
    (a strict xfail is not a skip: it ran)."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    longrepr = report.longrepr
    why = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    why = why.removeprefix("Skipped: ")
    report.outcome = "failed"
    report.longrepr = (
        f"{VARIABLE}=all: this test would have skipped and checked nothing ({why}); "
        "install what it needs (see the Makefile's test-deps target) or run without "
        f"{VARIABLE}"
    )
