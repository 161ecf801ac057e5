"""`project_scene`: where the project stands, in one call — the twin of `shell_scene`.

Branch, HEAD, ahead/behind its upstream, the dirty and untracked files with their sizes,
and the current verify epoch with whether it is stale. git is asked once for the status
(`--porcelain=v2 -z --branch`) and once for HEAD's subject, in child processes, so the
event loop never blocks. A folder outside git says so plainly instead of guessing.
"""

from __future__ import annotations

import inspect
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from pydantic import BaseModel, ConfigDict, Field

from .git_env import git_env
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

DEFAULT_FILES_CAP = 50
_VENV_MARKER = "pyvenv.cfg"
"""Dirty and untracked files listed (each); the counts always cover all of them."""


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
    """The scene of the project at `root` (None: no project open)."""
    glance = await _glance(verify)
    if root is None:
        note = "no project is open; open one with project_open"
        return ProjectSceneResult(root=None, git=False, note=note, files_cap=files_cap)
    scene = ProjectSceneResult(
        root=str(root),
        git=False,
        files_cap=files_cap,
        verify=glance,
    )
    if trust is not None and not (state := await trust(root)).trusted:
        scene.trust = state.summary
    status = await _git(root, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all")
    if status is None:
        scene.note = "git is not installed; branch, HEAD and changes are unknown"
        return scene
    if status.returncode != 0:
        scene.note = f"{root} is not inside a git work tree: no branch, HEAD or changes to show"
        return scene
    top = await _git(root, "rev-parse", "--show-toplevel")
    git_root = Path(top.stdout.decode().strip()) if top and top.returncode == 0 else root
    scene.git, scene.git_root = True, str(git_root)
    oid = _parse_status(status.stdout.decode("utf-8", "surrogateescape"), scene)
    if oid is not None:
        log = await _git(root, "log", "-1", "--format=%h%x00%s", oid)
        if log is not None and log.returncode == 0:
            sha, _, subject = log.stdout.decode("utf-8", "replace").strip().partition("\0")
            scene.head = HeadCommit(sha=sha, subject=subject)
    scene.untracked = await anyio.to_thread.run_sync(_fold_venvs, git_root, scene.untracked)
    all_dirty, all_untracked = scene.dirty, scene.untracked
    scene.dirty_count, scene.untracked_count = len(all_dirty), len(all_untracked)
    scene.dirty, scene.untracked = all_dirty[:files_cap], all_untracked[:files_cap]
    await anyio.to_thread.run_sync(_measure, git_root, [*scene.dirty, *scene.untracked])
    return scene


async def _glance(verify: VerifyProbe | None) -> EpochGlance | None:
    if verify is None:
        return None
    outcome = verify()
    if inspect.isawaitable(outcome):
        return await outcome
    return outcome


async def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    # Optional locks off: a status for display must not take the index lock a person's
    # own `git commit` may need at the same moment.
    env = git_env({"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    try:
        return await anyio.run_process(
            ["git", "-c", "core.quotepath=false", *args], cwd=root, env=env, check=False
        )
    except FileNotFoundError:
        return None


def _parse_status(output: str, scene: ProjectSceneResult) -> str | None:
    """Fill branch, upstream and files into `scene`; return HEAD's oid (None before commit 1)."""
    oid: str | None = None
    fields = output.split("\0")
    index = 0
    while index < len(fields):
        entry = fields[index]
        index += 1
        if entry.startswith("# "):
            key, _, value = entry[2:].partition(" ")
            if key == "branch.oid" and value != "(initial)":
                oid = value
            elif key == "branch.head":
                scene.detached = value == "(detached)"
                scene.branch = None if scene.detached else value
            elif key == "branch.upstream":
                scene.upstream = value
            elif key == "branch.ab":
                ahead, behind = value.split(" ")
                scene.ahead, scene.behind = int(ahead), -int(behind)
        elif entry.startswith("1 "):
            parts = entry.split(" ", 8)
            scene.dirty.append(GitFile(path=parts[8], status=parts[1], size=None))
        elif entry.startswith("2 "):
            parts = entry.split(" ", 9)
            # With -z the rename's source path is the next NUL-separated field.
            origin = fields[index]
            index += 1
            scene.dirty.append(
                GitFile(path=parts[9], status=parts[1], size=None, renamed_from=origin)
            )
        elif entry.startswith("u "):
            parts = entry.split(" ", 10)
            scene.dirty.append(GitFile(path=parts[10], status=parts[1], size=None))
        elif entry.startswith("? "):
            scene.untracked.append(GitFile(path=entry[2:], status="??", size=None))
    return oid


def _fold_venvs(git_root: Path, files: list[GitFile]) -> list[GitFile]:
    """An untracked virtualenv (a folder holding `pyvenv.cfg`, whatever its name: a `.venv`
    the project forgot in `.gitignore`) is one entry, `.venv/`, as `git status` shows it,
    not its hundreds of files: it is never part of a change (verify's snapshot leaves it
    out), and listing it filled the scene (772 of colorama 0.4.6's files with a bare venv)."""
    venv: dict[str, bool] = {}
    out: list[GitFile] = []
    folded: set[str] = set()
    for file in files:
        parts = file.path.split("/")[:-1]
        folder = next(
            (
                top
                for top in ("/".join(parts[: n + 1]) for n in range(len(parts)))
                if venv.setdefault(top, (git_root / top / _VENV_MARKER).is_file())
            ),
            None,
        )
        if folder is None:
            out.append(file)
        elif folder not in folded:
            folded.add(folder)
            out.append(GitFile(path=f"{folder}/", status="??", size=None))
    return out


def _measure(git_root: Path, files: list[GitFile]) -> None:
    for file in files:
        if file.path.endswith("/"):
            continue  # a folded virtualenv
        try:
            file.size = (git_root / file.path).lstat().st_size
        except OSError:
            file.size = None


def render_project_scene(scene: ProjectSceneResult) -> str:
    """The scene as a few lines of text for a person or a model (`project_scene_text`, which
    the CLI's light path calls on the host's JSON)."""
    return project_scene_text(scene.model_dump(mode="json"))
