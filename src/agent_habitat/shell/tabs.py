"""Tabs: what the shell's verbs read and act on — the tabs in state.db, their runs, and
where a tab's command starts (the project root, else its git root, else this cwd).

The service (`service.Shell`) builds one and hands it to the read-only verbs (`views`)
and the scene (`scene`), which need nothing else of it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import NotFoundError, UsageError
from ..workspace import scm_root

if TYPE_CHECKING:  # `default_cwd` and `resolve_cwd` serve `shell.quiet_run` without them
    from ..clock import Clock
    from ..config import ShellConfig
    from ..proc.spawner import Spawner
    from .run_store import RunStore, TabRow
    from .supervisor import RunSupervisor

__all__ = ["Tabs", "default_cwd", "resolve_cwd"]


class Tabs:
    """The tabs of one workspace's shell."""

    def __init__(
        self,
        store: RunStore,
        runs: RunSupervisor,
        config: ShellConfig,
        spawner: Spawner,
        clock: Clock,
        project_root: Path | None,
    ) -> None:
        self.store = store
        self.runs = runs
        self.config = config
        self.spawner = spawner
        self.clock = clock
        self._project_root = project_root.resolve() if project_root else None

    @property
    def project_root(self) -> Path | None:
        return self._project_root

    def default_cwd(self) -> str:
        """Open project root → its git root → this process's cwd."""
        return default_cwd(self._project_root)

    def set_project_root(self, path: Path) -> None:
        """Switch the project; tabs still at the old default cwd follow to the new one."""
        path = path.expanduser().resolve()
        if not path.is_dir():
            raise UsageError(f"project path {str(path)!r} is not a directory")
        old = self.default_cwd()
        self._project_root = path
        self.store.retarget_tabs(old, self.default_cwd())

    def get(self, name: str) -> TabRow:
        """The tab `name`; a NotFoundError naming the open tabs when there is none."""
        tab = self.store.tab(name)
        if tab is None:
            names = ", ".join(t.name for t in self.store.tabs()) or "none"
            raise NotFoundError(
                f"no tab {name!r}; open tabs: {names}. A tab is created by its first run."
            )
        return tab

    def resolve_cwd(self, tab: TabRow | None, cwd: str | None) -> str:
        """Where a command starts: `cwd` relative to the tab's (or the default) folder."""
        return resolve_cwd(tab.cwd if tab else None, cwd, self._project_root)


def default_cwd(project_root: Path | None) -> str:
    """Open project root (resolved) → its git root → this process's cwd."""
    if project_root is not None:
        # The git root only when the root is gone: walking every parent for `.git` took
        # a few stats of each call's way in a host with its project open.
        if project_root.is_dir():
            return str(project_root)
        root = scm_root(project_root)
        if root is not None and root.is_dir():
            return str(root)
    return os.getcwd()


def resolve_cwd(tab_cwd: str | None, cwd: str | None, project_root: Path | None) -> str:
    """Where a command starts: `cwd` relative to the tab's folder `tab_cwd` (None: a new
    tab), or to the default folder when the tab's is gone."""
    base = tab_cwd if tab_cwd and Path(tab_cwd).is_dir() else default_cwd(project_root)
    if cwd is None:
        return base
    try:
        path = Path(base, os.path.expanduser(cwd)).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python < 3.13)
        raise UsageError(
            f"cwd {cwd!r} cannot be resolved ({exc}); give an existing folder"
        ) from None
    if not path.is_dir():
        raise UsageError(f"cwd {cwd!r} does not exist or is not a directory ({path})")
    return str(path)
