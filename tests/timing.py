"""The one factor every wall-clock bound that is a speed claim is multiplied by:
`HABITAT_TEST_SLOWDOWN` (default 1; e.g. 3 on a machine loaded by other work). A bound is
a claim about this code's speed on an unloaded machine; the factor says how much slower
this machine is, once, instead of each test loosening its own bound after a flake.

Imported as `timing`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

import os

__all__ = ["SLOWDOWN", "VARIABLE"]

VARIABLE = "HABITAT_TEST_SLOWDOWN"


def _slowdown() -> float:
    raw = os.environ.get(VARIABLE, "").strip() or "1"
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value >= 1:
        raise ValueError(
            f"{VARIABLE}={raw!r}: set it to a number ≥ 1 (how much slower this machine is)"
        )
    return value


SLOWDOWN = _slowdown()
