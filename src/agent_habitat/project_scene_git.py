"""The project scene's git facts as plain data, standard library only: branch, HEAD,
ahead/behind its upstream, the dirty and untracked files with their sizes.

git is asked once for the status (`--porcelain=v2 -z --branch`), once for the work tree's
top and once for HEAD's subject. `project_scene` runs this in a worker thread and reads
the data with its models (so the event loop never blocks); `habitat project` with no host
runs it in the CLI's own process (`cli.project_quiet`): both answer from the same code.
A folder outside git says so plainly instead of guessing.
"""

from __future__ import annotations

import os
import subprocess

from .git_env import git_env

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from typing import Any

__all__ = ["DEFAULT_FILES_CAP", "scene_data"]

DEFAULT_FILES_CAP = 50
"""Dirty and untracked files listed (each); the counts always cover all of them."""
_VENV_MARKER = "pyvenv.cfg"


def _empty(root: str | None, files_cap: int) -> dict[str, Any]:
    """`ProjectSceneResult`'s fields in order, at their defaults (a test keeps them one)."""
    return {
        "root": root,
        "git": False,
        "note": None,
        "git_root": None,
        "branch": None,
        "detached": False,
        "head": None,
        "upstream": None,
        "ahead": None,
        "behind": None,
        "dirty": [],
        "dirty_count": 0,
        "untracked": [],
        "untracked_count": 0,
        "files_cap": files_cap,
        "verify": None,
        "trust": None,
    }


def _file(path: str, status: str, renamed_from: str | None = None) -> dict[str, Any]:
    """`GitFile`'s fields in order."""
    return {"path": path, "status": status, "size": None, "renamed_from": renamed_from}


def scene_data(
    root: str | None,
    *,
    verify: dict[str, Any] | None = None,
    trust: str | None = None,
    files_cap: int = DEFAULT_FILES_CAP,
) -> dict[str, Any]:
    """The scene of the project at `root` (None: no project open) as
    `ProjectSceneResult.model_dump(mode="json")` has it; `verify`: the epoch's glance
    (`EpochGlance`'s data), `trust`: the summary while the project is not trusted."""
    if root is None:
        scene = _empty(None, files_cap)
        scene["note"] = "no project is open; open one with project_open"
        return scene
    scene = _empty(root, files_cap)
    scene["verify"], scene["trust"] = verify, trust
    status = _git(root, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all")
    if status is None:
        scene["note"] = "git is not installed; branch, HEAD and changes are unknown"
        return scene
    if status.returncode != 0:
        scene["note"] = f"{root} is not inside a git work tree: no branch, HEAD or changes to show"
        return scene
    top = _git(root, "rev-parse", "--show-toplevel")
    # git names its top plainly; `os.path.normpath` writes it as `Path` would.
    git_root = (
        os.path.normpath(top.stdout.decode().strip()) if top and top.returncode == 0 else root
    )
    scene["git"], scene["git_root"] = True, git_root
    dirty: list[dict[str, Any]] = []
    untracked: list[dict[str, Any]] = []
    oid = _parse_status(status.stdout.decode("utf-8", "surrogateescape"), scene, dirty, untracked)
    if oid is not None:
        log = _git(root, "log", "-1", "--format=%h%x00%s", oid)
        if log is not None and log.returncode == 0:
            sha, _, subject = log.stdout.decode("utf-8", "replace").strip().partition("\0")
            scene["head"] = {"sha": sha, "subject": subject}
    untracked = _fold_venvs(git_root, untracked)
    scene["dirty_count"], scene["untracked_count"] = len(dirty), len(untracked)
    scene["dirty"], scene["untracked"] = dirty[:files_cap], untracked[:files_cap]
    _measure(git_root, [*scene["dirty"], *scene["untracked"]])
    return scene


def _git(root: str, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    # Optional locks off: a status for display must not take the index lock a person's
    # own `git commit` may need at the same moment.
    env = git_env({"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    try:
        return subprocess.run(
            ["git", "-c", "core.quotepath=false", *args],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    except FileNotFoundError:
        return None


def _parse_status(
    output: str,
    scene: dict[str, Any],
    dirty: list[dict[str, Any]],
    untracked: list[dict[str, Any]],
) -> str | None:
    """Fill branch and upstream into `scene`, the files into `dirty` and `untracked`;
    return HEAD's oid (None before commit 1)."""
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
                scene["detached"] = value == "(detached)"
                scene["branch"] = None if scene["detached"] else value
            elif key == "branch.upstream":
                scene["upstream"] = value
            elif key == "branch.ab":
                ahead, behind = value.split(" ")
                scene["ahead"], scene["behind"] = int(ahead), -int(behind)
        elif entry.startswith("1 "):
            parts = entry.split(" ", 8)
            dirty.append(_file(parts[8], parts[1]))
        elif entry.startswith("2 "):
            parts = entry.split(" ", 9)
            # With -z the rename's source path is the next NUL-separated field.
            origin = fields[index]
            index += 1
            dirty.append(_file(parts[9], parts[1], origin))
        elif entry.startswith("u "):
            parts = entry.split(" ", 10)
            dirty.append(_file(parts[10], parts[1]))
        elif entry.startswith("? "):
            untracked.append(_file(entry[2:], "??"))
    return oid


def _fold_venvs(git_root: str, files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An untracked virtualenv (a folder holding `pyvenv.cfg`, whatever its name: a `.venv`
    the project forgot in `.gitignore`) is one entry, `.venv/`, as `git status` shows it,
    not its hundreds of files: it is never part of a change (verify's snapshot leaves it
    out), and listing it filled the scene (772 of colorama 0.4.6's files with a bare venv)."""
    venv: dict[str, bool] = {}
    out: list[dict[str, Any]] = []
    folded: set[str] = set()
    for file in files:
        parts = file["path"].split("/")[:-1]
        folder = next(
            (
                top
                for top in ("/".join(parts[: n + 1]) for n in range(len(parts)))
                if venv.setdefault(top, os.path.isfile(os.path.join(git_root, top, _VENV_MARKER)))
            ),
            None,
        )
        if folder is None:
            out.append(file)
        elif folder not in folded:
            folded.add(folder)
            out.append(_file(f"{folder}/", "??"))
    return out


def _measure(git_root: str, files: list[dict[str, Any]]) -> None:
    for file in files:
        if file["path"].endswith("/"):
            continue  # a folded virtualenv
        try:
            file["size"] = os.lstat(os.path.join(git_root, file["path"])).st_size
        except OSError:
            file["size"] = None
