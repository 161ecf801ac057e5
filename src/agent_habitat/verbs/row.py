"""One row of the verb table: a verb's name, models, service call, annotations, texts.

`Verb` is generic in its args and result models, so mypy checks that each row's `call`
takes the row's `args` and returns its `result`. The tables keep each row's own type (no
annotation that would widen them); what reads the whole table takes `AnyVerb`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar

from pydantic import BaseModel

from ..shell import Progress

if TYPE_CHECKING:
    from ..habitat import Habitat

__all__ = ["PREFIX", "AnyVerb", "Call", "Group", "Progress", "Verb", "describe"]

Group = Literal["shell", "project", "verify", "file"]

PREFIX = "shell"
"""The shell verbs' prefix on the host's JSON API (`/api/shell_run`): the primary MCP
server's, so a route and the tool an agent calls have one name."""

A = TypeVar("A", bound=BaseModel)
R = TypeVar("R", bound=BaseModel, covariant=True)

Call: TypeAlias = Callable[["Habitat", A, Progress | None], Awaitable[R]]
"""`(habitat, validated args, progress or None) -> result model`."""


@dataclass(frozen=True)
class Verb(Generic[A, R]):
    """One verb. `description` is a template: {p} the tool prefix (`shell`, `terminal`),
    {cap} the output cap, {preview} the scene preview size, {tabs} the tab limit, {project}
    which project is open."""

    name: str
    args: type[A]
    result: type[R]
    call: Call[A, R]
    summary: str
    """One line: the CLI command's help."""
    description: str
    example: str = ""
    """A command line shown by `habitat COMMAND --help`."""
    reports_progress: bool = False
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    group: Group = "shell"
    positional: tuple[str, ...] = ()
    """Fields the CLI also takes as bare positionals, in this order (`tab` also as --tab)."""
    cli: bool = True
    """False when a one-shot CLI process has nothing to do with the verb (`project_open`)."""
    command: str | None = None
    """The CLI subcommand's name when it is not the verb's (`project_scene` → `habitat project`)."""
    confirm: str | None = None
    """A question a person answers before an MCP client's call runs (`project_trust`): the
    MCP tool asks it through the client (elicitation) and refuses without a yes. The CLI
    and the HTTP API are a person's own hands, so they ask nothing. {project} as above."""

    @property
    def cli_name(self) -> str:
        return self.command or self.name

    def tool_name(self, prefix: str) -> str:
        """Shell verbs carry the server's prefix (`shell_run`, `terminal_run`); the other
        groups are named after their group on every server (`project_open`)."""
        return f"{prefix if self.group == 'shell' else self.group}_{self.name}"


AnyVerb: TypeAlias = Verb[Any, BaseModel]
"""A row of the table whatever its models: what the adapters and the table's readers take
(its args validated by its own model, its result some model)."""


def _size(n: int) -> str:
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n} bytes"


def describe(verb: AnyVerb, habitat: Habitat, prefix: str) -> str:
    """The verb's description for this habitat (its caps, its open project)."""
    caps = habitat.config
    return verb.description.format(
        p=prefix,
        cap=_size(caps.output_cap_bytes),
        preview=_size(caps.preview_bytes),
        tabs=caps.max_tabs,
        project=habitat.project.describe(),
    )
