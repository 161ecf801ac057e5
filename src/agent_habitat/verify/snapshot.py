"""The snapshot a climb verifies: HEAD plus the dirty and untracked (non-ignored) files.

Its id is a hash of the HEAD commit and the sorted touched paths with their content
hashes, so any write to a touched file, or a new commit, gives a different id
(DESIGN §5 "Epochs"). Outside git every file counts as touched. Never part of a change, git
ignoring them or not: tool caches and bytecode, the stores a test run keeps for itself
(coverage.py's data files `.coverage` and `.coverage.*`, hypothesis's `.hypothesis/`), a
virtualenv (a folder holding `pyvenv.cfg`,
e.g. a `.venv` the project forgot in `.gitignore`), and the files `habitat init` and
`habitat rules --write` put in the project for the agent. A git that refuses to work
(e.g. "dubious ownership" of a folder another user owns) is an error that says what git
said and how to fix it, never a guess that every file changed.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import HabitatError
from ..regular import NotRegularFileError, open_regular

__all__ = [
    "HABITAT_FILES",
    "GitError",
    "NotTheChange",
    "Snapshot",
    "is_noise",
    "take_snapshot",
]


class GitError(HabitatError):
    """git is there but refuses to tell what changed; the message has its words and the fix."""


# Tool caches and bytecode are never part of a change, ignored by git or not.
_NOISE_DIRS = frozenset(
    {
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".git",
        ".hg",
        ".tox",
        ".nox",
    }
)
# coverage.py's SQLite data file and its parallel-mode siblings (`.coverage.HOST.PID.RAND`),
# written by a project's own test run (pytest-cov, `coverage run`): never a user's edit.
_DATA_FILE = ".coverage"
# pytest (8.x) builds `.pytest_cache` in a `pytest-cache-files-XXXX` folder beside it and
# renames it into place: files appear and vanish there while tests run.
_NOISE_PREFIXES = ("pytest-cache-files-",)
_VENV_DIRS = frozenset({".venv", "venv", "node_modules", "build", "dist"})
_DELETED = "-"
_VENV_MARKER = "pyvenv.cfg"
HABITAT_FILES = frozenset(
    {
        # `habitat init --client …` (client_config.CONFIG_FILES)
        ".mcp.json",
        ".cursor/mcp.json",
        ".vscode/mcp.json",
        # `habitat rules --write --for …` (rules.RULES_FILES)
        "CLAUDE.md",
        "AGENTS.md",
        ".cursor/rules/habitat.mdc",
    }
)
"""What the habitat writes into a project for the agent: never code, never the change.
(verify may not import the modules that write them; a test keeps the lists in step.)"""
# A FIFO, socket or device has no content to hash (and opening one can block): git never
# lists one, and a walk outside git leaves it out of the change.
SPECIAL = "special"


@dataclass(frozen=True)
class Snapshot:
    id: str
    head: str | None
    hashes: dict[str, str] = field(default_factory=dict)
    """Touched path (relative, posix) → sha256 of its content, `-` when deleted."""
    in_git: bool = True

    @property
    def touched(self) -> list[str]:
        return sorted(self.hashes)

    @property
    def deleted(self) -> list[str]:
        return sorted(p for p, h in self.hashes.items() if h == _DELETED)


def is_noise(path: str) -> bool:
    """A tool's cache or bytecode (relative posix path): never part of a change."""
    parts = path.split("/")
    if any(p in _NOISE_DIRS for p in parts[:-1]) or path.endswith((".pyc", ".pyo")):
        return True
    name = parts[-1]
    if name == _DATA_FILE or name.startswith(_DATA_FILE + "."):
        return True
    return any(p.startswith(_NOISE_PREFIXES) for p in parts)


class NotTheChange:
    """Which paths of `root` are never part of a change: noise, the habitat's own files, and
    anything inside a virtualenv. Folders are asked once each (one `stat` per folder)."""

    def __init__(self, root: Path, ignores: Collection[str] = ()) -> None:
        self.root = root
        self.ignores = frozenset(ignores)
        """Folder names the detected toolchains fill with their output (`toolchains/`)."""
        self._venv: dict[str, bool] = {}

    def forget(self, path: str) -> None:
        """A `pyvenv.cfg` appeared or went: its folder is asked again."""
        self._venv.pop(path.rpartition("/")[0], None)

    def in_venv(self, path: str) -> bool:
        parts = path.split("/")[:-1]
        for end in range(1, len(parts) + 1):
            folder = "/".join(parts[:end])
            if folder not in self._venv:
                self._venv[folder] = (self.root / folder / _VENV_MARKER).is_file()
            if self._venv[folder]:
                return True
        return False

    def __call__(self, path: str) -> bool:
        if self.ignores and not self.ignores.isdisjoint(path.split("/")[:-1]):
            return True
        return is_noise(path) or path in HABITAT_FILES or self.in_venv(path)


def _top_venvs(root: Path) -> list[str]:
    # git lists every file of an untracked, unignored virtualenv (thousands): leave the
    # ones at the top out of its walk. Deeper ones are filtered after (`NotTheChange`).
    try:
        with os.scandir(root) as entries:
            return sorted(
                e.name
                for e in entries
                if e.is_dir(follow_symlinks=False) and (Path(e.path) / _VENV_MARKER).is_file()
            )
    except OSError:
        return []


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, check=False, timeout=60)


def file_hash(path: Path) -> str:
    """sha256 of the file's content (of a symlink's target path); `-` when it is gone,
    `dir` for a folder, `special` for a FIFO, socket or device (never opened)."""
    try:
        if path.is_symlink():
            return hashlib.sha256(os.readlink(path).encode()).hexdigest()
        if path.is_dir():
            # A nested git repository shows up as a directory entry; its own HEAD is elsewhere.
            return "dir"
        with open_regular(path) as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except FileNotFoundError:
        return _DELETED
    except NotRegularFileError:
        return SPECIAL


def _refused(root: Path, proc: subprocess.CompletedProcess[bytes]) -> GitError:
    said = proc.stderr.decode("utf-8", "replace").strip()
    fix = "fix git's complaint above"
    if "dubious ownership" in said:
        where = re.search(r"repository at '([^']+)'", said)
        fix = (
            "if you trust this folder, run: git config --global --add safe.directory "
            f"{where[1] if where else root}"
        )
    return GitError(f"git refuses to read {root}, so the change is unknown: {said} — {fix}")


# The project's place in its work tree does not change while it is open: asked once.
_PREFIXES: dict[Path, str] = {}


def _prefix(root: Path) -> str:
    if root not in _PREFIXES:
        _PREFIXES[root] = _git(root, "rev-parse", "--show-prefix").stdout.decode().strip()
    return _PREFIXES[root]


def _entry_path(entry: str) -> str | None:
    """The path of one `git status --porcelain=v2 -z` entry (renames are off)."""
    kind = entry[:1]
    if kind == "1":
        parts = entry.split(" ", 8)
    elif kind == "u":
        parts = entry.split(" ", 10)
    elif kind == "?":
        return entry[2:]
    else:
        return None  # headers (`# …`), ignored files
    return parts[-1] if len(parts) in (9, 11) else None


def _git_changes(root: Path) -> tuple[str | None, list[str]] | None:
    # One git process: `--branch` gives HEAD's commit in the header (`# branch.oid`), and a
    # folder outside a work tree fails the same command. Each git process costs tens of ms
    # on a busy machine, and a verify takes three snapshots.
    try:
        status = _git(
            root,
            "status",
            "--porcelain=v2",
            "--branch",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--",
            ".",
            *(f":(exclude,literal){name}" for name in _top_venvs(root)),
        )
    except FileNotFoundError:
        return None  # no git installed: not a work tree as far as we can tell
    if status.returncode != 0:
        if b"not a git repository" in status.stderr:
            return None
        raise _refused(root, status)
    prefix = _prefix(root)
    head: str | None = None
    paths: list[str] = []
    for entry in status.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if entry.startswith("# branch.oid "):
            oid = entry.removeprefix("# branch.oid ").strip()
            head = None if oid == "(initial)" else oid
            continue
        path = _entry_path(entry)
        if not path:
            continue
        # git reports paths from the top of the work tree; we want them from `root`.
        if prefix and path.startswith(prefix):
            path = path[len(prefix) :]
        paths.append(path.rstrip("/"))
    return head, paths


def _walk_all(root: Path, ignores: frozenset[str]) -> list[str]:
    # Like `find -xdev`: a folder opened as a project (`/`, say) never leads the walk into
    # /proc, /sys or /dev, whose files are endless, blocking or sockets.
    device = os.stat(root).st_dev
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in _NOISE_DIRS
            and d not in _VENV_DIRS
            and d not in ignores
            and d[0] != "."
            and not d.startswith(_NOISE_PREFIXES)
            and not os.path.isfile(os.path.join(dirpath, d, _VENV_MARKER))
            and _same_device(Path(dirpath, d), device)
        )
        rel = Path(dirpath).relative_to(root)
        out.extend((rel / name).as_posix() for name in filenames)
    return out


def _same_device(folder: Path, device: int) -> bool:
    try:
        return os.lstat(folder).st_dev == device
    except OSError:
        return False


def take_snapshot(root: Path, ignores: Collection[str] = ()) -> Snapshot:
    """Read git (blocking; call it from a worker thread in async code). `ignores`: folder
    names never part of the change (`toolchains.snapshot_of` passes the detected ones)."""
    changes = _git_changes(root)
    if changes is None:
        head, paths, in_git = None, _walk_all(root, frozenset(ignores)), False
    else:
        (head, paths), in_git = changes, True
    outside = NotTheChange(root, ignores)
    hashes = {p: file_hash(root / p) for p in sorted(set(paths)) if not outside(p)}
    hashes = {p: h for p, h in hashes.items() if h != SPECIAL}
    digest = hashlib.sha256((head or "no-head").encode())
    for path, content in sorted(hashes.items()):
        digest.update(f"\n{path}\0{content}".encode("utf-8", "surrogateescape"))
    return Snapshot(id=digest.hexdigest()[:16], head=head, hashes=hashes, in_git=in_git)
