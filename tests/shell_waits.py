"""Shell fragments that let a command and its test take turns, each step bounded.

A test that needs "these two overlap" or "a report came while it ran" makes the command
wait for a file the test (or the other command) creates, instead of sleeping long enough
and measuring the clock. Imported as `shell_waits`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

import shlex
from pathlib import Path

__all__ = ["TIMED_OUT_STATUS", "await_file"]

_POLL_SECONDS = 0.01
# Exit status of a command whose wait ran out: distinct from what the commands under test use.
TIMED_OUT_STATUS = 3


def await_file(path: Path, within: float = 20.0) -> str:
    """A POSIX shell fragment that goes on once `path` exists; exits 3 after `within` s."""
    polls = max(1, int(within / _POLL_SECONDS))
    quoted = shlex.quote(str(path))
    return (
        f"__n=0; until [ -e {quoted} ]; do __n=$((__n+1));"
        f" if [ $__n -gt {polls} ]; then exit {TIMED_OUT_STATUS}; fi; sleep {_POLL_SECONDS}; done"
    )
