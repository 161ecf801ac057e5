"""The environment a command starts with: the tab's carried environment, then the
non-interactive defaults that keep anything from waiting forever on a prompt.

What a tab carries is kept as a `EnvDelta` against its base environment (this process's
environment with the defaults), never whole: the state folder then holds only what the
tab's commands changed, not a copy of every secret the habitat was started with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from ..secrets import environ

__all__ = [
    "NON_INTERACTIVE",
    "EnvDelta",
    "apply_delta",
    "base_env",
    "carried_env",
    "command_env",
    "env_delta",
]

NON_INTERACTIVE: Mapping[str, str] = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "TERM": "dumb",
    "DEBIAN_FRONTEND": "noninteractive",
    "PIP_NO_INPUT": "1",
    "PYTHONUNBUFFERED": "1",
}


def command_env(
    tab_env: Mapping[str, str] | None, extra: Mapping[str, str] | None
) -> dict[str, str]:
    """Tab environment (or this process's, for a new tab) + defaults + per-command `extra`."""
    env = environ() if tab_env is None else dict(tab_env)
    env.update(NON_INTERACTIVE)
    if extra:
        env.update(extra)
    return env


def carried_env(final: Mapping[str, str], extra: Mapping[str, str] | None) -> dict[str, str]:
    """What the next command inherits: the final environment less per-command extras
    that the command did not change itself."""
    out = dict(final)
    for key, value in (extra or {}).items():
        if out.get(key) == value:
            del out[key]
    return out


class EnvDelta(TypedDict):
    """What a tab changed in its base environment."""

    set: dict[str, str]
    unset: list[str]


def base_env() -> dict[str, str]:
    """What a new tab's first command starts with (before per-command extras)."""
    return command_env(None, None)


def env_delta(env: Mapping[str, str], base: Mapping[str, str]) -> EnvDelta:
    changed = {k: v for k, v in env.items() if base.get(k) != v}
    return {"set": changed, "unset": sorted(k for k in base if k not in env)}


def apply_delta(delta: EnvDelta, base: Mapping[str, str]) -> dict[str, str]:
    env = dict(base)
    for name in delta["unset"]:
        env.pop(name, None)
    env.update(delta["set"])
    return env
