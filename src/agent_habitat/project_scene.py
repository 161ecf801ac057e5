"""`project_scene`: where the project stands, in one call — the twin of `shell_scene`.

Branch, HEAD, ahead/behind its upstream, the dirty and untracked files with their sizes,
and the current verify epoch with whether it is stale. The git facts come from
`project_scene_git` (standard library only: `habitat project` with no host runs it in the
CLI's process), run in a worker thread so the event loop never blocks, and are read with
the models here. A folder outside git says so plainly instead of guessing.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import anyio
from pydantic import BaseModel, ConfigDict, Field

from .project_scene_git import DEFAULT_FILES_CAP, scene_data
from .project_scene_text import project_scene_text
from .trust import TrustState

__all__ = [
    "DEFAULT_FILES_CAP",
    "PROJECT_SCENE_DESCRIPTION",
    "EpochGlance",
    "GitFile",
    "HeadCommit",
    "ProjectSceneArgs",
    "ProjectSceneResult",
    "VerifyProbe",
    "project_scene",
    "render_project_scene",
]


PROJECT_SCENE_DESCRIPTION = (
    "Where the project stands: branch, HEAD, ahead/behind, dirty and untracked files "
    f"(at most {DEFAULT_FILES_CAP} of each listed, all counted), the verify epoch's state and "
    "`stale` (files changed since: distrust its verdict). Call it first."
)


class _Model(BaseModel):
    # Built on first use (validator, serializer), not at import: most commands never use
    # these, and every shell command imports them with the verb table.
    model_config = ConfigDict(defer_build=True)


class ProjectSceneArgs(_Model):
    """`project_scene` takes no arguments."""

    model_config = {"extra": "forbid"}


class HeadCommit(_Model):
    sha: str = Field(description="Abbreviated commit id of HEAD.")
    subject: str = Field(description="First line of its message.")


class GitFile(_Model):
    path: str = Field(description="Path relative to the git work tree's top (POSIX).")
    status: str = Field(
        description="git's two-letter XY code (index, work tree; `.` = unchanged), `??` untracked."
    )
    size: int | None = Field(
        description="Size in bytes now; None when the file is deleted, or for an untracked "
        "virtualenv (`.venv/`, listed as one entry)."
    )
    renamed_from: str | None = Field(default=None, description="Old path of a rename or copy.")


class EpochGlance(_Model):
    """The current verify epoch, as the verify runner reports it."""

    task: str | None = Field(default=None, description="Verify task id of the epoch, if any.")
    state: str = Field(description="The epoch's state, e.g. running, green, red, incomplete.")
    snapshot: str | None = Field(default=None, description="Snapshot id the epoch verified.")
    stale: bool = Field(
        description="True when files changed since that snapshot: its verdict is not about "
        "the code as it is now; run verify again."
    )
    current_snapshot: str | None = Field(default=None, description="Snapshot id of the tree now.")


VerifyProbe = Callable[[], Awaitable[EpochGlance | None] | EpochGlance | None]
"""What the composition root passes so the scene can show the verify epoch."""


class ProjectSceneResult(_Model):
    root: str | None = Field(description="The open project, or None.")
    git: bool = Field(description="Whether the project is inside a git work tree.")
    note: str | None = Field(
        default=None, description="Why git facts are missing (no project, not a git tree)."
    )
    git_root: str | None = Field(default=None, description="Top of the git work tree.")
    branch: str | None = Field(default=None, description="Current branch; None when detached.")
    detached: bool = Field(default=False, description="HEAD is detached (no branch).")
    head: HeadCommit | None = Field(default=None, description="HEAD; None before a first commit.")
    upstream: str | None = Field(default=None, description="The branch's upstream, if set.")
    ahead: int | None = Field(default=None, description="Commits ahead of upstream; None: none.")
    behind: int | None = Field(default=None, description="Commits behind upstream; None: none.")
    dirty: list[GitFile] = Field(default_factory=list, description="Changed tracked files.")
    dirty_count: int = Field(default=0, description="All changed tracked files, listed or not.")
    untracked: list[GitFile] = Field(default_factory=list, description="Untracked files.")
    untracked_count: int = Field(default=0, description="All untracked (non-ignored) files.")
    files_cap: int = Field(description="At most this many files are listed in each list.")
    verify: EpochGlance | None = Field(
        default=None, description="The current verify epoch; None when there is no runner/epoch."
    )
    trust: str | None = Field(
        default=None,
        description="Set only while the project is not trusted: nothing of it has run yet.",
    )


async def project_scene(
    root: Path | None,
    *,
    verify: VerifyProbe | None = None,
    trust: Callable[[Path], Awaitable[TrustState]] | None = None,
    files_cap: int = DEFAULT_FILES_CAP,
) -> ProjectSceneResult:
    """The scene of the project at `root` (None: no project open): its git facts from
    `project_scene_git`, in a worker thread."""
    glance = await _glance(verify)
    summary: str | None = None
    if root is not None and trust is not None and not (state := await trust(root)).trusted:
        summary = state.summary
    data = await anyio.to_thread.run_sync(
        partial(
            scene_data,
            None if root is None else str(root),
            verify=None if glance is None else glance.model_dump(mode="json"),
            trust=summary,
            files_cap=files_cap,
        )
    )
    return ProjectSceneResult.model_validate(data)


async def _glance(verify: VerifyProbe | None) -> EpochGlance | None:
    if verify is None:
        return None
    outcome = verify()
    if inspect.isawaitable(outcome):
        return await outcome
    return outcome


def render_project_scene(scene: ProjectSceneResult) -> str:
    """The scene as a few lines of text for a person or a model (`project_scene_text`, which
    the CLI's light path calls on the host's JSON)."""
    return project_scene_text(scene.model_dump(mode="json"))
