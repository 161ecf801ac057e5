"""Signal names and numbers as callers write them: TERM, SIGTERM, 15."""

from __future__ import annotations

import signal as signal_module

from ..errors import UsageError

__all__ = ["parse_signal"]


def parse_signal(value: str | int) -> int:
    if isinstance(value, int) or value.isdigit():
        number = int(value)
        if number in {s.value for s in signal_module.Signals}:
            return number
    else:
        name = value.upper()
        name = name if name.startswith("SIG") else f"SIG{name}"
        if hasattr(signal_module.Signals, name):
            return int(signal_module.Signals[name])
    raise UsageError(
        f"unknown signal {value!r}; use a name such as TERM, KILL, INT, HUP or a number"
    )
