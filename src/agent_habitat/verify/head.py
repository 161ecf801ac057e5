"""Read-only access to the snapshot's base commit: which touched files exist there, their
content, and an exported copy of the project as it is at HEAD.

The export is `git archive` unpacked by `tar` into the workspace state folder, not a `git worktree`:
it leaves the user's repository untouched (no entry under `.git/worktrees`, nothing to
prune when the habitat dies) and needs no lock on it. It lives at one fixed path, re-filled
when HEAD moves, so a type checker's incremental cache there stays warm across commits.
Every call blocks (git subprocesses): call it from a worker thread.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import threading
from collections.abc import Iterable
from pathlib import Path

from ..git_env import git_env
from ..workspace import private_dirs

__all__ = ["HeadTree"]

_MARKER = ".habitat-head"
# The working tree's ignored files laid over the export: at most this many, each at most
# this big (a generated `_version.py` or `*.mo` catalogue is small; a stray database is not).
_OVERLAY_FILES = 2000
_OVERLAY_BYTES = 4 << 20
_EXPORTING: dict[Path, threading.Lock] = {}
"""One lock per export folder, for this process's threads (dict.setdefault is atomic)."""


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    proc = subprocess.run(
        ["git", *args],
        env=git_env(),
        cwd=root,
        input=stdin,
        capture_output=True,
        check=False,
        timeout=120,
    )
    if proc.returncode != 0:
        raise OSError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def _unpack(top: Path, tree: str, into: Path) -> None:
    archive = subprocess.Popen(
        ["git", "archive", "--format=tar", tree],
        env=git_env(),
        cwd=top,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert archive.stdout is not None
    try:
        # -m: each file gets the time of this unpacking, not its commit's. cargo calls a
        # unit fresh when its sources are older than its last build, so HEAD moved back to
        # an older commit ran the binaries built in HEAD's target folder for the other one.
        tar = subprocess.run(
            ["tar", "-x", "-m", "--no-same-owner", "-f", "-", "-C", str(into)],
            stdin=archive.stdout,
            capture_output=True,
            check=False,
            timeout=120,
        )
    finally:
        archive.stdout.close()
        _, err = archive.communicate(timeout=120)
    if archive.returncode != 0:
        raise OSError(f"git archive failed: {err.decode(errors='replace').strip()}")
    if tar.returncode != 0:
        raise OSError(f"tar failed unpacking HEAD: {tar.stderr.decode(errors='replace').strip()}")


class HeadTree:
    """The project at commit `head` (the project may sit in a sub-folder of the work tree)."""

    def __init__(self, root: Path, head: str, state_dir: Path) -> None:
        self.root = root
        self.head = head
        self.export_dir = state_dir / "baseline" / "head"
        self._blobs: dict[str, str | None] = {}
        self._lines: dict[str, list[str] | None] = {}

    def blobs(self, paths: Iterable[str]) -> dict[str, str]:
        """Path → blob id for the paths that exist at HEAD."""
        wanted = sorted({p for p in paths if p not in self._blobs})
        for path in [p for p in wanted if p.startswith(("/", "../")) or p == ".."]:
            # Outside the repository: rustc's span in the standard library (`/rustc/<hash>/
            # library/...`, unicase 2.8.1 without `extern crate alloc`) made git refuse the
            # whole call ("Invalid path"), and the rung an internal error.
            self._blobs[path] = None
            wanted.remove(path)
        if wanted:
            out = _git(self.root, "ls-tree", "-z", self.head, "--", *wanted)
            found: dict[str, str] = {}
            for entry in out.decode("utf-8", "surrogateescape").split("\0"):
                meta, _, name = entry.partition("\t")
                parts = meta.split()
                if len(parts) == 3 and parts[1] == "blob":
                    found[name] = parts[2]
            for path in wanted:
                self._blobs[path] = found.get(path)
        return {p: b for p in paths if (b := self._blobs.get(p)) is not None}

    def read(self, path: str) -> bytes | None:
        """The file's content at HEAD; None when it did not exist there."""
        blob = self.blobs([path]).get(path)
        if blob is None:
            return None
        return _git(self.root, "cat-file", "blob", blob)

    def lines(self, path: str) -> list[str] | None:
        if path not in self._lines:
            data = self.read(path)
            self._lines[path] = (
                None if data is None else data.decode("utf-8", "replace").splitlines()
            )
        return self._lines[path]

    def export(self, overlay: bool = True) -> Path:
        """The project as it is at HEAD, unpacked once per HEAD commit, with the working
        tree's ignored files laid over it (`_overlay`). Threads of one process take turns
        (the warm-up's steps and a climb's rungs run side by side): a second caller waits
        for the first one's export instead of unpacking over it. `overlay=False`: the
        unpacking alone, made ahead of a rung that may use it (which lays them over then:
        a `git ls-files` spared where none does, as in a comment's verify)."""
        with _EXPORTING.setdefault(self.export_dir, threading.Lock()):
            export = self._export()
            if overlay:
                self._overlay(export)
            return export

    def _overlay(self, export: Path) -> None:
        """Copy in the files git ignores that sit beside tracked ones, not in an ignored
        folder: what the project's build wrote into its source (hatch-vcs's and
        setuptools-scm's `_version.py`, compiled `*.mo` catalogues) and its code needs at
        HEAD as much as now. Without them every import of the package failed in the export.
        A wholly ignored folder (a venv, `node_modules`, `target/`, caches) is one entry of
        `--directory` and is never walked nor copied. A path HEAD tracks keeps HEAD's file."""
        listed = _git(
            self.root,
            *("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"),
        )
        names = [n for n in listed.decode("utf-8", "surrogateescape").split("\0") if n]
        files = [n for n in names if not n.endswith("/")][:_OVERLAY_FILES]
        tracked = self.blobs(files) if files else {}
        for name in files:
            source, target = self.root / name, export / name
            if name in tracked or name == _MARKER:
                continue
            try:
                st = source.lstat()
                if not stat.S_ISREG(st.st_mode) or st.st_size > _OVERLAY_BYTES:
                    continue
                have = target.stat() if target.exists() else None
                if have and (have.st_size, have.st_mtime_ns) == (st.st_size, st.st_mtime_ns):
                    continue
                private_dirs(target.parent)
                shutil.copy2(source, target)
            except OSError:
                continue  # gone meanwhile, or unreadable: HEAD's run does without it

    def git_index(self, export: Path) -> Path | None:
        """A git directory for HEAD's `export` (as `GIT_DIR`, with `GIT_WORK_TREE` the export)
        whose index is HEAD's tree, reading the repository's objects (never writing them), for
        a script run there that asks git which files are the project's (`git ls-files | xargs
        eclint`): the export is no checkout, and the repository itself is never handed to the
        project's code. Made once per HEAD (blocking); None when git could not make it."""
        git_dir = self.export_dir.with_name("head-git")
        with _EXPORTING.setdefault(git_dir, threading.Lock()):
            try:
                if (git_dir / _MARKER).read_text(encoding="utf-8") == self.head:
                    return git_dir
            except OSError:
                pass
            shutil.rmtree(git_dir, ignore_errors=True)
            env = {**git_env(), "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(export)}
            git = functools.partial(
                subprocess.run, env=env, cwd=export, capture_output=True, check=True, timeout=120
            )
            try:
                where = _git(self.root, "rev-parse", "--git-path", "objects").decode().strip()
                prefix = _git(self.root, "rev-parse", "--show-prefix").decode().strip()
                git(["git", "init", "-q"])
                alternates = git_dir / "objects" / "info" / "alternates"
                alternates.write_text(f"{(self.root / where).resolve()}\n", encoding="utf-8")
                (git_dir / "info").mkdir(exist_ok=True)
                (git_dir / "info" / "exclude").write_text(f"/{_MARKER}\n", encoding="utf-8")
                git(["git", "read-tree", f"{self.head}:{prefix}" if prefix else self.head])
            except (OSError, subprocess.SubprocessError):
                return None
            (git_dir / _MARKER).write_text(self.head, encoding="utf-8")
            return git_dir

    def _export(self) -> Path:
        marker = self.export_dir / _MARKER
        try:
            if marker.read_text(encoding="utf-8") == self.head:
                return self.export_dir
        except OSError:
            pass
        prefix = _git(self.root, "rev-parse", "--show-prefix").decode().strip()
        top = Path(_git(self.root, "rev-parse", "--show-toplevel").decode().strip())
        tree = f"{self.head}:{prefix}" if prefix else self.head
        fresh = self.export_dir.with_name(f"head.{os.getpid()}.tmp")
        shutil.rmtree(fresh, ignore_errors=True)
        private_dirs(fresh)
        # From the top: inside a sub-folder, git archive would look for it within `tree`.
        # Piped into tar, not unpacked here: tarfile held the GIL for the whole export
        # (0.8 s on packaging at load 30) and a verify arriving meanwhile waited for it
        # (its event loop resumed 0.5 s late: bench/ladder/ladder_climb_phases.py).
        _unpack(top, tree, fresh)
        (fresh / _MARKER).write_text(self.head, encoding="utf-8")
        shutil.rmtree(self.export_dir, ignore_errors=True)
        fresh.replace(self.export_dir)
        return self.export_dir
