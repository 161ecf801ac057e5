"""The whole verb table: every group's rows, and a row by name."""

from __future__ import annotations

from .files import FILE_VERBS
from .project import PROJECT_VERBS
from .row import AnyVerb, Group
from .shell import SHELL_VERBS
from .verify import VERIFY_VERBS

__all__ = ["VERBS", "verb"]

VERBS: tuple[AnyVerb, ...] = (*SHELL_VERBS, *PROJECT_VERBS, *FILE_VERBS, *VERIFY_VERBS)


def verb(name: str, group: Group = "shell") -> AnyVerb:
    """The row named `name` in `group`; KeyError names what exists."""
    for row in VERBS:
        if (row.name, row.group) == (name, group):
            return row
    known = ", ".join(row.tool_name(row.group) for row in VERBS)
    raise KeyError(f"no verb {group}.{name}; known: {known}")
