"""Where a workspace's state lives: `$HABITAT_HOME/<namespace>/<name>-<hash>/`, never in
the project tree."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from . import state_place
from .errors import HabitatError

__all__ = [
    "UnsafeStateError",
    "Workspace",
    "find_project_root",
    "habitat_home",
    "private_dirs",
    "refuse_unsafe",
    "scm_root",
    "write_private",
]


def habitat_home() -> Path:
    """`$HABITAT_HOME`, else `$XDG_STATE_HOME/agent-habitat`, else `~/.local/state/…`."""
    return Path(state_place.habitat_home())


def scm_root(path: Path) -> Path | None:
    """The git work tree containing `path`, or None."""
    for candidate in [path, *path.parents]:
        if (candidate / ".git").exists():
            return candidate
    return None


def find_project_root(start: Path | None = None) -> Path:
    """The git root above `start` (default: cwd), else `start` itself."""
    return Path(state_place.project_root(None if start is None else str(start)))


class Workspace:
    """A project root (or a named namespace such as the escape terminal) and its state folder.

    Immutable, compared and hashed by value. A plain class, not a dataclass: every CLI call
    finds its host through this module, and `dataclasses` costs it `inspect`'s import."""

    __slots__ = ("root", "state_dir")
    root: Path | None
    state_dir: Path

    def __init__(self, *, root: Path | None, state_dir: Path) -> None:
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "state_dir", state_dir)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Workspace is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Workspace):
            return NotImplemented
        return (self.root, self.state_dir) == (other.root, other.state_dir)

    def __hash__(self) -> int:
        return hash((self.root, self.state_dir))

    def __repr__(self) -> str:
        return f"Workspace(root={self.root!r}, state_dir={self.state_dir!r})"

    @classmethod
    def for_project(cls, root: Path, namespace: str = "workspaces") -> Workspace:
        root = root.resolve()
        return cls(root=root, state_dir=Path(state_place.state_dir(str(root), namespace)))

    @classmethod
    def named(cls, namespace: str, root: Path | None = None) -> Workspace:
        """A state namespace not tied to one project (the escape terminal uses `terminal`)."""
        return cls(root=root.resolve() if root else None, state_dir=habitat_home() / namespace)

    @property
    def label(self) -> str:
        return str(self.root) if self.root else str(self.state_dir)

    @property
    def db_path(self) -> Path:
        return self.state_dir / "state.db"

    @property
    def spool_dir(self) -> Path:
        return self.state_dir / "spool"

    @property
    def substrates_dir(self) -> Path:
        """Fresh per-task test substrates (temp dir, database, ports) live here."""
        return self.state_dir / "substrates"

    def ensure(self) -> Workspace:
        """Create the state folder, private: folders 0700, `state.db` (and its WAL files,
        which SQLite creates with the database's mode) 0600, tightening an older one."""
        home = habitat_home()
        _private_dir(home)
        for folder in _folders_between(home, self.spool_dir):
            _private_dir(folder)
        for folder in (home, *_folders_between(home, self.state_dir)):
            refuse_unsafe(folder)
        # An empty file is a valid new database: SQLite takes it as it is, mode included.
        os.close(os.open(self.db_path, os.O_WRONLY | os.O_CREAT, 0o600))
        for name in ("state.db", "state.db-wal", "state.db-shm"):
            path = self.state_dir / name
            if path.exists():
                refuse_unsafe(path)
                os.chmod(path, 0o600)
        return self


class UnsafeStateError(HabitatError):
    """A state folder or file another user owns or may write: what it holds could run code
    (a swapped `state.db` names the commands a tab reruns)."""


def refuse_unsafe(path: Path) -> None:
    """Raise UnsafeStateError naming `path` when someone else owns it or may write to it."""
    info = path.lstat()
    kind = "folder" if stat.S_ISDIR(info.st_mode) else "file"
    if not state_place.open_to_others(info):
        return
    if info.st_uid != os.getuid():
        raise UnsafeStateError(
            f"the state {kind} {path} is owned by uid {info.st_uid}, not by you "
            f"({os.getuid()}): another user could change what the habitat runs; point "
            "HABITAT_HOME at a folder of your own (or remove this one) and try again"
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeStateError(
            f"the state {kind} {path} is writable by group or others (mode "
            f"{stat.S_IMODE(info.st_mode):o}): another user could change what the habitat "
            f"runs; run `chmod {'700' if kind == 'folder' else '600'} {path}` or point "
            "HABITAT_HOME at a folder of your own"
        )


def _folders_between(top: Path, bottom: Path) -> list[Path]:
    """The folders below `top` down to `bottom`, outermost first (`bottom` under `top`)."""
    try:
        relative = bottom.relative_to(top)
    except ValueError:
        return [bottom.parent, bottom]
    return [top / Path(*relative.parts[: i + 1]) for i in range(len(relative.parts))]


def _private_dir(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.stat()
    # Never a shared folder someone pointed HABITAT_HOME at (`/tmp`, sticky and open to all).
    if info.st_uid == os.getuid() and not info.st_mode & 0o1000 and info.st_mode & 0o077:
        os.chmod(folder, 0o700)


def private_dirs(folder: Path) -> Path:
    """`folder`, created with every missing folder above it 0700: `mkdir(parents=True)`
    gives the parents the umask's mode (0755), as `mkdir -p` does."""
    missing: list[Path] = []
    above = folder
    while not above.exists() and above != above.parent:
        missing.append(above)
        above = above.parent
    for created in reversed(missing):
        created.mkdir(mode=0o700, exist_ok=True)
    return folder


def write_private(path: Path, data: str | bytes) -> None:
    """Write a state file whole: a temp file beside it (0600, the user's alone, as every
    state file is), then a rename, so a concurrent reader never sees half of it."""
    private_dirs(path.parent)
    import threading

    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
