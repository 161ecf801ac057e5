"""`habitat history|last|which|wait|kill` with no host, read from `state.db` in this process.

These verbs only read (`wait` with no pattern where nothing runs reads the newest run's end;
`kill` where nothing runs and no process was left on record has nothing to do). When no host
serves the workspace and opening the habitat would do nothing more than read
(`cli.quiet_state`), the command line read for the host (`cli.verb_argv`) is answered from
the state with the standard library (`shell.quiet_reads`), and the answer shown by
`cli.shell_views`, as the host's answer and the full path's are: the same text, `--json` and
exit code (tests keep them equal). Anything else takes the full path: a value the verb's
model would refuse (its words name the flag), `last` with `--head-lines`, `--tail-lines` or
`--grep`, `wait --until`, a tab or run that is not there (its refusal names the open tabs), a
state that needs something done, a process an ended run left running. A person at a
terminal gets the host started behind the command, as after the full path (`cli.host_start`).
"""

from __future__ import annotations

import sys

from .shell_views import VIEWS, emit_json_data

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable
    from typing import Any

    from .verb_argv import VerbCall

    Reader = Callable[[sqlite3.Connection, dict[str, Any]], dict[str, Any] | None]

__all__ = ["answer", "quiet_verb", "signal_name", "start_host", "tab_name"]

_INDEX_MAX = 2**63 - 1  # `limits.INDEX_MAX`
_HISTORY_DEFAULT = 20  # `shell.models.HistoryArgs.limit`: its default, its bounds
_HISTORY_LIMIT = (1, 1000)
_OUTPUT_CAP_BYTES = 16 * 1024  # `config.ShellConfig.output_cap_bytes` (none is configured)
_TAB_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def tab_name(name: object) -> bool:
    """`shell.models.TAB_NAME_PATTERN`, without `re`."""
    return isinstance(name, str) and 1 <= len(name) <= 32 and set(name) <= _TAB_CHARS


def _counted(value: object, low: int) -> bool:
    return type(value) is int and low <= value <= _INDEX_MAX


def _history(conn: sqlite3.Connection, body: dict[str, Any]) -> dict[str, Any] | None:
    from ..shell.quiet_reads import quiet_history

    limit = body.get("limit", _HISTORY_DEFAULT)
    if type(limit) is not int or not _HISTORY_LIMIT[0] <= limit <= _HISTORY_LIMIT[1]:
        return None
    return quiet_history(conn, body.get("tab", "main"), limit)


def _last(conn: sqlite3.Connection, body: dict[str, Any]) -> dict[str, Any] | None:
    from ..shell.quiet_reads import quiet_last

    if set(body) - {"tab", "index", "since"}:
        return None  # a line window or a pattern: the full path reads it
    index, since = body.get("index"), body.get("since", 0)
    if (index is not None and not _counted(index, 1)) or not _counted(since, 0):
        return None
    return quiet_last(conn, body.get("tab", "main"), index, _OUTPUT_CAP_BYTES, since)


def _which(conn: sqlite3.Connection, body: dict[str, Any]) -> dict[str, Any] | None:
    from ..errors import HabitatError
    from ..shell.quiet_reads import quiet_which

    try:
        return quiet_which(conn, body.get("tab", "main"))
    except HabitatError:
        return None  # a shell no longer here: the full path says which are


_WAIT_SECONDS = (0.0, 3600.0)  # `shell.models.WaitArgs.timeout_seconds`: gt, le


def _wait(conn: sqlite3.Connection, body: dict[str, Any]) -> dict[str, Any] | None:
    from ..shell.quiet_reads import quiet_wait

    if set(body) - {"tab", "timeout_seconds"}:
        return None  # a pattern to look for: the full path searches the output
    seconds = body.get("timeout_seconds", 30)
    if type(seconds) not in (int, float) or not _WAIT_SECONDS[0] < seconds <= _WAIT_SECONDS[1]:
        return None
    return quiet_wait(conn, body.get("tab", "main"), _OUTPUT_CAP_BYTES)


def signal_name(value: object) -> str | None:
    """The signal `proc.signals.parse_signal` reads in `value`, named as `KillResult` names
    it (`SIGTERM`), or None for one it refuses (the full path words the refusal)."""
    import signal

    if not isinstance(value, str):
        return None
    if value.isdigit():
        try:
            return signal.Signals(int(value)).name
        except ValueError:
            return None
    name = value.upper()
    name = name if name.startswith("SIG") else f"SIG{name}"
    member = signal.Signals.__members__.get(name)
    return None if member is None else member.name


def _kill(conn: sqlite3.Connection, body: dict[str, Any]) -> dict[str, Any] | None:
    from ..shell.quiet_reads import quiet_kill

    tab = body.get("tab")
    if set(body) - {"tab", "signal"} or tab is None:
        return None  # no tab given: the full path says it is required
    name = signal_name(body.get("signal", "TERM"))
    return None if name is None else quiet_kill(conn, tab, name)


_READERS: dict[str, Reader] = {
    "history": _history,
    "last": _last,
    "which": _which,
    "wait": _wait,
    "kill": _kill,
}


def quiet_verb(call: VerbCall, root: str) -> int | None:
    """The exit code of `call` answered from the state of the workspace at `root` (no host
    serves it), or None when the full path must answer."""
    reader = _READERS.get(call.command)
    if reader is None or not tab_name(call.body.get("tab", "main")):
        return None
    from .quiet_state import quiet_state

    conn = quiet_state(root)
    if conn is None:
        return None
    import sqlite3

    try:
        data = reader(conn, call.body)
    except sqlite3.Error:
        return None  # busy or changed under us: the full path waits and says what it is
    finally:
        conn.close()
    return None if data is None else answer(call, data, root)


def answer(call: VerbCall, data: dict[str, Any], root: str) -> int:
    """`data`, the verb's result, shown as the full path shows it (`--json`, or its view),
    the host started behind it as after the full path; the exit code the view gives."""
    view = VIEWS[call.command]
    if call.json:
        emit_json_data(data)
    else:
        view.show(data, False, root)
    sys.stdout.flush()
    start_host(root)
    return view.exit_code(data)


def start_host(root: str) -> None:
    """After the answer, as after the full path: a person at a terminal gets the host."""
    from .host_start import in_a_terminal

    if in_a_terminal():
        from pathlib import Path

        from .host_start import start_host

        start_host(Path(root))
