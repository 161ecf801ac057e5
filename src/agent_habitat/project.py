"""Which project is open in a habitat, where that came from, and who follows a change.

The project decides where commands start by default and (with the next issues) what the
ladder verifies. It opens at start (`--project`, else the git work tree of the workspace)
and switches with `project_open`, from an adapter, or from an MCP client's roots. A switch
publishes `project.opened` on the bus; listeners (the shell's default cwd, an MCP server's
`tools/list_changed`) run first, so whoever hears the event sees the new state.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .events import EventBus, Unsubscribe
from .limits import PathText
from .project_folder import PROJECT_FILES, VCS_FOLDERS, a_project, existing_dir
from .workspace import scm_root

__all__ = [
    "PROJECT_FILES",
    "VCS_FOLDERS",
    "OnChange",
    "Project",
    "ProjectOpenArgs",
    "ProjectOpenResult",
    "ProjectSource",
    "a_project",
    "existing_dir",
]

ProjectSource = Literal["flag", "roots", "cwd", "project_open"]
"""`flag`: `--project`; `roots`: the MCP client's roots; `cwd`: the git work tree the habitat
was started in; `project_open`: the verb."""

OnChange = Callable[[Path], Awaitable[None]]
"""Called with the new root after the project switched."""


class _Model(BaseModel):
    # Built on first use (validator, serializer), not at import: most commands never use
    # these, and every shell command imports them with the verb table.
    model_config = ConfigDict(defer_build=True)


class ProjectOpenArgs(_Model):
    model_config = ConfigDict(extra="forbid", strict=True)

    path: PathText = Field(
        min_length=1,
        description="Absolute, or relative to the server's cwd.",
    )


class ProjectOpenResult(_Model):
    root: str = Field(description="The project now open.")
    previous: str | None = Field(description="The project open before, if any.")
    git_root: str | None = Field(description="The git work tree containing it, if any.")
    source: ProjectSource


class Project:
    """The open project of one habitat (`root` is None while none is open)."""

    def __init__(self, bus: EventBus, root: Path | None, source: ProjectSource | None) -> None:
        self.bus = bus
        self.root = root
        self.source = source
        self._listeners: list[OnChange] = []

    @classmethod
    def at_start(cls, bus: EventBus, flag: Path | None, workspace_root: Path | None) -> Project:
        """`flag` when given (it must be a folder); else the git work tree of the workspace."""
        if flag is not None:
            return cls(bus, a_project(flag, named="--project"), "flag")
        around = scm_root(workspace_root) if workspace_root is not None else None
        return cls(bus, around, "cwd" if around else None)

    def on_change(self, listener: OnChange) -> Unsubscribe:
        """Run `listener(root)` on every switch to another root, until unsubscribed."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def open(
        self, path: str | Path, source: ProjectSource = "project_open"
    ) -> ProjectOpenResult:
        """Switch to `path`: listeners run and `project.opened` is published when it differs."""
        root = existing_dir(Path(path))
        previous = self.root
        self.root, self.source = root, source
        if root != previous:
            for listener in list(self._listeners):
                await listener(root)
            self.bus.publish("project.opened", data={"root": str(root), "source": source})
        git = scm_root(root)
        return ProjectOpenResult(
            root=str(root),
            previous=str(previous) if previous else None,
            git_root=str(git) if git else None,
            source=source,
        )

    def describe(self) -> str:
        if self.root is None:
            return "No project is open (commands start in the server's cwd)."
        return f"Open project: {self.root} (from {self.source})."
