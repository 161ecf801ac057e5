"""The environment a command starts with: the tab's carried environment, then the
non-interactive defaults that keep anything from waiting forever on a prompt."""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["NON_INTERACTIVE", "carried_env", "command_env"]

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
    env = dict(os.environ if tab_env is None else tab_env)
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
