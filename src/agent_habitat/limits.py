"""Field types for values that end up in a command line, an environment or a path: what the
operating system cannot carry is refused by the model, naming the field, instead of failing
later as an internal error (`ValueError: embedded null byte`, `OSError: Argument list too long`).

Limits are Linux's: one argv or environment string is at most `MAX_ARG_STRLEN` (32 pages,
128 KiB with its terminating NUL), a path at most `PATH_MAX` (4096 bytes with its NUL).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

__all__ = [
    "INDEX_MAX",
    "MAX_ARG_BYTES",
    "MAX_PATH_BYTES",
    "MAX_PATTERN_CHARS",
    "MAX_SECONDS",
    "ArgText",
    "EnvMap",
    "OptEnvMap",
    "OptPathText",
    "PathText",
    "StdinText",
    "check_os_text",
    "check_path",
]

MAX_ARG_BYTES = 128 * 1024 - 1
MAX_PATH_BYTES = 4096 - 1
MAX_NAME_BYTES = 255
MAX_PATTERN_CHARS = 64 * 1024
INDEX_MAX = 2**63 - 1
"""SQLite's largest integer: a bigger index or offset could never match a row."""
MAX_SECONDS = 10**7
"""About 115 days: longer than any wait is meant to be, short enough for every timer."""


def check_os_text(value: str, limit: int, what: str) -> str:
    """`value` if the OS can carry it: no NUL, valid Unicode, at most `limit` UTF-8 bytes."""
    if "\0" in value:
        raise ValueError(f"holds a NUL byte (\\0), which no {what} can carry")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"is not valid Unicode (lone surrogate {value[exc.start]!r} at {exc.start})"
        ) from None
    if size > limit:
        raise ValueError(f"is {size} bytes; a {what} holds at most {limit}")
    return value


# The validators take None too: `Annotated[X | None, …]` keeps the field's annotation a
# plain `X | None`, which is what the CLI derives its flags from.
def _arg(value: str | None) -> str | None:
    return None if value is None else check_os_text(value, MAX_ARG_BYTES, "command-line argument")


def check_path(value: str) -> str:
    """`value` if it can name a file: what `check_os_text` checks, and no part of it longer
    than a file name can be (the kernel's NAME_MAX: ENAMETOOLONG otherwise)."""
    check_os_text(value, MAX_PATH_BYTES, "path")
    for part in value.split("/"):
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            shown = f"{part[:40]}…"
            raise ValueError(
                f"has a part {shown!r} of {len(part.encode())} bytes; "
                f"a file name holds at most {MAX_NAME_BYTES}"
            )
    return value


def _path(value: str | None) -> str | None:
    return None if value is None else check_path(value)


MAX_ENV_ENTRIES = 4096


def _env(env: dict[str, str] | None) -> dict[str, str] | None:
    if env is not None and len(env) > MAX_ENV_ENTRIES:
        raise ValueError(f"has {len(env)} entries; at most {MAX_ENV_ENTRIES}")
    for key, value in (env or {}).items():
        if not key or "=" in key:
            raise ValueError(f"name {key!r} must be non-empty and hold no `=`")
        check_os_text(key, MAX_ARG_BYTES, "environment variable name")
        try:
            check_os_text(f"{key}={value}", MAX_ARG_BYTES, "environment variable")
        except ValueError as exc:
            raise ValueError(f"value of {key!r} {exc}") from None
    return env


def _stdin(value: str) -> str:
    return check_os_text(value, 2**62, "stream")


ArgText = Annotated[str, AfterValidator(_arg)]
"""A string passed as one argv element (a command line)."""
OptPathText = Annotated[str | None, AfterValidator(_path)]
OptEnvMap = Annotated[dict[str, str] | None, AfterValidator(_env)]
StdinText = Annotated[str, AfterValidator(_stdin)]
"""Text written to a pipe: anything that encodes as UTF-8."""
PathText = Annotated[str, AfterValidator(_path)]
"""A path (cwd, project folder, shell executable)."""
EnvMap = Annotated[dict[str, str], AfterValidator(_env)]
"""Environment variables: names without `=`, no NUL anywhere, each entry within argv limits."""
