"""Watch the project tree and report changed, non-ignored paths within milliseconds.

Built on watchfiles' Rust notifier, driven directly rather than through `awatch` for two
reasons: the watch is set up before `start()` returns (a test or a caller can write right
after and be sure it is seen), and stopping takes one `step` instead of awatch's thread
timeout (seconds). Ignored paths — tool caches, virtualenvs, `.git` internals and whatever
git ignores (`git check-ignore --stdin`, batched and cached) — are never reported.
"""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

import anyio
import anyio.abc
import anyio.to_thread
from watchfiles import Change, DefaultFilter
from watchfiles._rust_notify import RustNotify

from ...git_env import git_env
from ...regular import is_special
from ..snapshot import NotTheChange
from ..toolchains import ignored_dirs

__all__ = ["GitIgnore", "ProjectWatcher"]

logger = logging.getLogger(__name__)

# Changes arriving within STEP of each other are one batch; a batch is cut after DEBOUNCE.
# Each STEP the notifier's loop wakes and takes the GIL (signals, the stop event), whether
# anything changed or not: at 5 ms that was 200 wakes a second in an idle host, each one a
# GIL hand-off with the event loop serving a call. A change is reported within 2 STEPs.
STEP_MS = 25
DEBOUNCE_MS = 40
_IDLE_TIMEOUT_MS = 1000
_IGNORED_DIRS = (
    *DefaultFilter.ignore_dirs,
    ".ruff_cache",
    ".nox",
    ".eggs",
    "venv",
)
_IGNORE_FILES = (".gitignore", ".git/info/exclude")


class GitIgnore:
    """Which project paths git ignores; answers cached until a `.gitignore` changes."""

    def __init__(self, root: Path, ignores: Collection[str] | None = None) -> None:
        """`ignores`: folder names never a change; by default the detected toolchains'."""
        self.root = root
        self._cache: dict[str, bool] = {}
        self.ignores = frozenset(ignored_dirs(root) if ignores is None else ignores)
        # `.habitat-tmp`: the edit verbs' atomic-write temp files (files/atomic.py), never a
        # change. `CACHEDIR.TAG`: a build cache's marker, written first into a temp folder
        # the tool then renames (cargo's first build: `target1a2b3c/` → `target/`).
        self._filter = DefaultFilter(
            ignore_dirs=(*_IGNORED_DIRS, *sorted(self.ignores)),
            ignore_entity_patterns=(
                *DefaultFilter.ignore_entity_patterns,
                r"\.habitat-tmp$",
                r"^CACHEDIR\.TAG$",
            ),
        )
        self._in_git: bool | None = None
        self._outside = NotTheChange(root, self.ignores)

    def forget(self) -> None:
        self._cache.clear()
        self._outside = NotTheChange(self.root, self.ignores)

    def _ask_git(self, paths: list[str]) -> set[str]:
        if self._in_git is None:
            self._in_git = (self.root / ".git").exists() or (
                subprocess.run(
                    ["git", "rev-parse", "--is-inside-work-tree"],
                    env=git_env(),
                    cwd=self.root,
                    capture_output=True,
                    check=False,
                    timeout=30,
                ).returncode
                == 0
            )
        if not self._in_git or not paths:
            return set()
        proc = subprocess.run(
            ["git", "check-ignore", "--stdin", "-z"],
            env=git_env(),
            cwd=self.root,
            input="\0".join(paths).encode("utf-8", "surrogateescape") + b"\0",
            capture_output=True,
            check=False,
            timeout=30,
        )
        # Exit 1: none of them is ignored; 128: not a repository (or a bad path).
        if proc.returncode != 0:
            return set()
        return {p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p}

    def relevant(self, paths: Iterable[str]) -> list[str]:
        """The given relative paths that are neither noise nor ignored by git (blocking)."""
        for p in paths:
            if p.endswith("/pyvenv.cfg"):
                self._outside.forget(p)
        candidates = sorted(
            {
                p
                for p in paths
                if p and not self._outside(p) and self._filter(Change.modified, str(self.root / p))
            }
        )
        if any(p.endswith(_IGNORE_FILES) for p in candidates):
            self.forget()
        unknown = [p for p in candidates if p not in self._cache]
        if unknown:
            ignored = self._ask_git(unknown)
            for path in unknown:
                self._cache[path] = path in ignored
        return [p for p in candidates if not self._cache[p]]


class ProjectWatcher:
    """Calls `on_change(paths)` with relative, non-ignored paths as files change under `root`."""

    def __init__(self, root: Path, on_change: Callable[[list[str]], None]) -> None:
        self.root = root
        self.on_change = on_change
        self.ignore = GitIgnore(root)

    def _relevant(self, raw: set[tuple[int, str]]) -> list[str]:
        return self.ignore.relevant(self._relative(raw))

    def _relative(self, raw: set[tuple[int, str]]) -> list[str]:
        out: set[str] = set()
        for _change, path in raw:
            # A directory is no content of its own (git does not see an empty one).
            # A FIFO, socket or device has no content: a writer feeding a FIFO is no change.
            if Path(path).is_dir() or is_special(Path(path)):
                continue
            try:
                out.add(Path(path).relative_to(self.root).as_posix())
            except ValueError:
                continue
        return sorted(out)

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Watch until cancelled; `task_status.started()` once the watch is in place."""
        stop = threading.Event()
        with RustNotify([str(self.root)], False, False, 300, True, True) as notify:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_set_when_cancelled, stop)
                task_status.started()
                while True:
                    # Not cancellable: the thread returns within one STEP once `stop` is set,
                    # which the sibling task does as soon as this group is cancelled.
                    raw = await anyio.to_thread.run_sync(
                        notify.watch, DEBOUNCE_MS, STEP_MS, _IDLE_TIMEOUT_MS, stop
                    )
                    if raw == "stop":
                        await anyio.sleep_forever()  # cancelled: let the group end
                    if isinstance(raw, str):
                        continue
                    paths = await anyio.to_thread.run_sync(self._relevant, raw)
                    if paths:
                        self.on_change(paths)


async def _set_when_cancelled(stop: threading.Event) -> None:
    try:
        await anyio.sleep_forever()
    finally:
        stop.set()
