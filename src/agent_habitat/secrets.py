"""Values that look secret, and keeping them out of what the habitat shows and stores.

A variable whose name looks secret (`*TOKEN*`, `*SECRET*`, `*KEY`, `*PASSWORD*`) is taken
to hold a secret. Its value, as the habitat's own environment holds it, is shown as `***`
in command output given to a client and in events (and so in the journal); a command line
that assigns one (`GITHUB_TOKEN=… git push`) is shown with the value redacted too.

A value typed inline (`GITHUB_TOKEN=… cmd`, `export API_KEY=…`) or given as a run's `env`
is a secret of this process from then on (`remember_typed`): its output, every later
output, events and results show it as `***`. Wherever a command line is shown (a run's
result, `last`, the history, the scene, the dashboard, errors) it goes through
`shown_command`. `state.db` keeps the command as typed, since a rerun needs it: it is the
user's alone (0600), as every file of the state folder is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "REDACTED",
    "environ",
    "is_secret_name",
    "redact_data",
    "redact_text",
    "remember_typed",
    "secret_values",
    "shown_command",
]

REDACTED = "***"
# Shorter values are words like `false` or `1` (TOKENIZERS_PARALLELISM=false): redacting
# them would garble every output, and they protect nothing.
_MIN_SECRET_CHARS = 8
_ASSIGNMENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)=('[^']*'|\"[^\"]*\"|\S+)")


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return "TOKEN" in upper or "SECRET" in upper or "PASSWORD" in upper or upper.endswith("KEY")


def secret_values(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The secret values of `env` (default this process's environment), longest first, so a
    secret that contains another is redacted whole."""
    if env is None:
        found = _snapshot()[2]
        if not _typed:
            return found
        global _merged
        typed = _typed
        if _merged[0] is not found or _merged[1] is not typed:
            _merged = (found, typed, tuple(sorted(set(found) | typed, key=len, reverse=True)))
        return _merged[2]
    return _secrets_of(env)


# Replaced whole, never changed in place: worker threads read it while a run adds to it.
_typed: frozenset[str] = frozenset()
_merged: tuple[tuple[str, ...], frozenset[str], tuple[str, ...]] = ((), frozenset(), ())


def remember_typed(command: str, env: Mapping[str, str] | None = None) -> None:
    """Take the values `command` assigns to secret-looking names, and those of `env`'s, as
    secrets of this process from now on (see the module's docstring)."""
    found = [value for name, value in (env or {}).items() if is_secret_name(name)]
    if "=" in command:
        for match in _ASSIGNMENT.finditer(command):
            if is_secret_name(match.group(1)):
                value = match.group(2)
                if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
                    value = value[1:-1]
                found.append(value)
    global _typed
    new = {value for value in found if len(value) >= _MIN_SECRET_CHARS} - _typed
    if new:
        _typed = _typed | new


def shown_command(command: str) -> str:
    """`command` as shown to anyone: secret values and secret-looking assignments as `***`."""
    return redact_text(command, secret_values(), assignments=True)


def environ() -> dict[str, str]:
    """A copy of this process's environment, as `dict(os.environ)`. Reading `os.environ`
    decodes every name and value on each read (~0.1 ms, several times in each run); this
    decodes once per change of it."""
    return dict(_snapshot()[1])


def _secrets_of(env: Mapping[str, str]) -> tuple[str, ...]:
    found = {v for k, v in env.items() if len(v) >= _MIN_SECRET_CHARS and is_secret_name(k)}
    return tuple(sorted(found, key=len, reverse=True))


_Snapshot = tuple[dict[bytes, bytes] | None, dict[str, str], tuple[str, ...]]
_last: _Snapshot = (None, {}, ())


def _snapshot() -> _Snapshot:
    """This process's environment and its secrets, read again only when `os.environ`
    changed: its raw mapping (CPython's `os.environ._data`, what `putenv` was given) is
    compared with the one last read, a comparison of bytes in C."""
    global _last
    raw: dict[bytes, bytes] | None = getattr(os.environ, "_data", None)
    if raw is None:  # not CPython's os.environ: read it each time
        env = dict(os.environ)
        return None, env, _secrets_of(env)
    seen = _last
    if seen[0] is not None and seen[0] == raw:
        return seen
    env = dict(os.environ)
    _last = (dict(raw), env, _secrets_of(env))
    return _last


def redact_text(text: str, values: Iterable[str], *, assignments: bool = False) -> str:
    """`text` with each of `values` replaced by `***`; with `assignments`, also the value of
    every `NAME=value` whose name looks secret."""
    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
    if assignments and "=" in text:
        text = _ASSIGNMENT.sub(
            lambda m: f"{m.group(1)}={REDACTED}" if is_secret_name(m.group(1)) else m.group(0),
            text,
        )
    return text


def redact_data(data: Any, values: tuple[str, ...] | None = None) -> Any:
    """A copy of JSON-like `data` with every string redacted (values and assignments)."""
    values = secret_values() if values is None else values
    if isinstance(data, str):
        return redact_text(data, values, assignments=True)
    if isinstance(data, dict):
        return {key: redact_data(item, values) for key, item in data.items()}
    if isinstance(data, list | tuple):
        return [redact_data(item, values) for item in data]
    return data
