"""Errors a caller can act on.

Every error names the problem and, where there is one, the fix. Adapters turn
`HabitatError` into an MCP tool error or a CLI exit code 2; anything else is a bug.
"""

from __future__ import annotations

__all__ = [
    "BusyTabError",
    "ConfigError",
    "HabitatError",
    "NotFoundError",
    "TabLimitError",
    "UsageError",
]


class HabitatError(Exception):
    """A request the habitat refused, with a message meant for the caller."""


class UsageError(HabitatError):
    """Bad input: an argument is malformed or out of range. `field` names the argument
    when it is one, for each adapter to say as its caller knows it (the MCP field `files`,
    the CLI's `--files`); the message then does not name it."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class TabLimitError(UsageError):
    """A new tab over the limit. The message names the open tabs and the way to close one
    as the CLI's user and the dashboard's take it (`habitat close TAB`); `said` words it
    for another caller (the MCP tools say `shell_close`)."""

    def __init__(self, limit: int, names: list[str]) -> None:
        self.limit = limit
        self.names = names
        super().__init__(self.said("`habitat close TAB`"))

    def said(self, close: str) -> str:
        """The refusal, naming `close` as the way to close a tab."""
        return (
            f"tab limit reached ({self.limit} open: {', '.join(self.names)}); "
            f"close one with {close} or reuse an open tab"
        )


class NotFoundError(HabitatError):
    """A tab, run or resource that does not exist."""


class BusyTabError(HabitatError):
    """The tab is already running a command."""


class ConfigError(HabitatError):
    """Configuration that cannot be used; the message names the key."""
