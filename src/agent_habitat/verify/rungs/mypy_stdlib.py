"""The standard library's mypy cache, shared by a user's workspaces (issue 22).

A cold mypy spends most of a small project's check on the standard library: isodate
0.7.2's first check takes ~0.85 s of CPU (mypy 2.4), 0.65-0.75 s of it on builtins, typing
and what they import, the same for every project checked with the same mypy and options.
So once a workspace's plain mypy run has cached them, their entries are kept in the habitat's
state folder (`$HABITAT_HOME/mypy-stdlib/<key>/`), and a workspace whose cache is still
empty starts from them: its first check does only its own modules.

Correct or not used: mypy trusts a cache entry only when its own checks pass — the same mypy
version, the same options that affect the cache, a data file unchanged since it was written,
and a source of the same size and hash wherever it lies (`validate_meta`), dependencies
included — so an entry that does not fit is checked anew, as on a cold run, and the output is
mypy's either way (tests/verify check it byte for byte). Only the habitat's own mypy on a
project that configures none shares (its options are the defaults the rung passes; a
configuration may name plugins or options the entries were not made with): the key is that
mypy's folder and the flags. Only standard-library modules (typeshed's `stdlib/VERSIONS`)
are kept: a project's own modules, and what it installed, stay in its workspace.

The first project a user ever checks still pays for the standard library once.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from ...workspace import habitat_home, private_dirs
from .mypy_head_cache import seed_cache

__all__ = ["publish", "seed", "shared_dir"]

_TABLE = "files2"
"""mypy's SQLite cache table (mypy/metastore.py): path, mtime, data."""


@functools.cache
def _mypy_dir() -> Path | None:
    spec = importlib.util.find_spec("mypy")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@functools.cache
def _stdlib_tops() -> frozenset[str]:
    """The top-level modules of the standard library in this mypy's typeshed."""
    where = _mypy_dir()
    if where is None:
        return frozenset()
    try:
        text = (where / "typeshed" / "stdlib" / "VERSIONS").read_text(encoding="utf-8")
    except OSError:
        return frozenset()
    names = (line.split("#")[0].split(":")[0].strip() for line in text.splitlines())
    return frozenset(name for name in names if name)


def shared_dir(flags: Sequence[str]) -> Path | None:
    """The shared cache for the habitat's own mypy run with `flags` (everything but the
    targets, the cache folder and the interpreter it is pointed at); None without that mypy."""
    where = _mypy_dir()
    if where is None or not _stdlib_tops():
        return None
    key = hashlib.sha256(json.dumps([str(where), *flags]).encode()).hexdigest()[:16]
    return habitat_home() / "mypy-stdlib" / key


def seed(shared: Path, cache: Path) -> bool:
    """Blocking: `cache` (a workspace's `--cache-dir`) begun from the shared entries when it
    holds none yet; whether it was."""
    return seed_cache(shared, cache)


def _stdlib_row(key: str) -> bool:
    # `pathlib/__init__.meta.ff`, `os/path.data.ff`, `builtins.meta_ex.ff`; never
    # `@plugins_snapshot.json` or another of mypy's own files.
    top = key.split("/", 1)[0].split(".", 1)[0]
    return not key.startswith("@") and top in _stdlib_tops()


def publish(cache: Path, shared: Path) -> int:
    """Blocking: the standard-library entries of `cache` (a workspace's `--cache-dir`, after
    a plain mypy run) added to `shared` where it lacks them; how many rows it added. Best
    effort: a shard another process holds locked is left for a later run."""
    added = 0
    if not cache.is_dir():
        return 0
    for version in sorted(p for p in cache.iterdir() if p.is_dir()):
        for shard in sorted(version.glob("cache.*.db")):
            target = private_dirs(shared / version.name) / shard.name
            added += _merge(shard, target)
    return added


def _merge(shard: Path, target: Path) -> int:
    # Only the standard library's rows the store lacks; written into a copy of the shard
    # with no journal and no sync (it is a cache, made anew if lost: a publish of isodate's
    # took 0.3-0.8 s of fsyncs at load 12 against a few ms), then renamed over it, so a
    # reader (`seed`) sees the whole shard before or after, never half of it.
    try:
        with contextlib.closing(_read_only(shard)) as src:
            paths = [p for (p,) in src.execute(f"SELECT path FROM {_TABLE}") if _stdlib_row(p)]
            have: set[str] = set()
            if paths and target.exists():
                with contextlib.closing(_read_only(target)) as old:
                    have = {p for (p,) in old.execute(f"SELECT path FROM {_TABLE}")}
            missing = [p for p in paths if p not in have]
            rows = [
                row
                for start in range(0, len(missing), 500)
                for row in src.execute(
                    f"SELECT path, mtime, data FROM {_TABLE} WHERE path IN "
                    f"({','.join('?' * len(missing[start : start + 500]))})",
                    missing[start : start + 500],
                )
            ]
    except sqlite3.Error:
        return 0
    if not rows:
        return 0
    # Beside the version's folder, not in it: `seed` copies what that folder holds.
    fresh = target.parent.parent / f".{target.parent.name}-{target.name}.{os.getpid()}.tmp"
    try:
        with contextlib.closing(sqlite3.connect(fresh)) as out:
            fresh.chmod(0o600)
            out.execute("PRAGMA journal_mode=OFF")
            out.execute("PRAGMA synchronous=OFF")
            if target.exists():
                with contextlib.closing(_read_only(target)) as old:
                    old.backup(out)
            # The same table as mypy's (metastore.py), so the file is a cache as it is.
            out.execute(
                f"CREATE TABLE IF NOT EXISTS {_TABLE} "
                "(path TEXT UNIQUE NOT NULL, mtime REAL, data BLOB)"
            )
            out.execute(f"CREATE INDEX IF NOT EXISTS path_idx on {_TABLE}(path)")
            with out:
                # An entry already there stays: same mypy, same options, same source.
                out.executemany(
                    f"INSERT OR IGNORE INTO {_TABLE} (path, mtime, data) VALUES (?, ?, ?)", rows
                )
        fresh.replace(target)
    except (sqlite3.Error, OSError):
        fresh.unlink(missing_ok=True)
        return 0
    return len(rows)


def _read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=0.5)
