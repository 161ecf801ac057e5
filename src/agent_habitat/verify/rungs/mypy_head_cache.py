"""HEAD's mypy cache begun from the working tree's, so HEAD's first check does not redo the
standard library.

`compile.project` checks HEAD (for its baseline) with plain mypy in HEAD's export, over a
cache of its own (`baseline/mypy-cache`): sharing the working tree's would re-point every
module's entry at the other tree on each check. But a cold cache costs mypy the whole
standard library again (builtins, typing and what they import: ~0.7 s of CPU of isodate
0.7.2's 0.85 s cold check, mypy 2.4), which the working tree's check has just cached. The
first time HEAD is checked, its cache starts as a copy of the working tree's: mypy trusts an
entry whose source has the same hash, whatever its path (`validate_meta`), so the standard
library and every module HEAD did not change are fresh, and the changed ones are checked
again, as always.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

from ...workspace import private_dirs

__all__ = ["seed_cache"]


def seed_cache(source: Path, target: Path) -> bool:
    """Blocking: `target` (a mypy `--cache-dir`) begun as a copy of `source` when it holds no
    cache yet; whether it copied. mypy's SQLite shards are copied through SQLite's backup
    (a consistent copy while another mypy may write them), other files as they are."""
    if not source.is_dir() or any(target.glob("*/*.db")) or any(target.glob("*/*.json")):
        return False
    copied = False
    for version in sorted(p for p in source.iterdir() if p.is_dir()):
        into = private_dirs(target / version.name)
        for item in sorted(version.rglob("*")):
            dest = into / item.relative_to(version)
            if item.is_dir():
                private_dirs(dest)
            elif item.suffix == ".db":
                copied |= _backup(item, dest)
            elif item.is_file() and not item.name.endswith(("-wal", "-shm", "-journal")):
                # Its times kept: mypy checks a data file's mtime against its entry's.
                with contextlib.suppress(OSError):
                    shutil.copy2(item, dest)
                    copied = True
    return copied


def _backup(source: Path, dest: Path) -> bool:
    try:
        src = sqlite3.connect(f"{source.as_uri()}?mode=ro", uri=True, timeout=2.0)
    except sqlite3.Error:
        return False
    try:
        with contextlib.closing(sqlite3.connect(dest)) as out:
            # A copy of a cache, made anew if lost: no journal, no waiting for the disk.
            out.execute("PRAGMA journal_mode=OFF")
            out.execute("PRAGMA synchronous=OFF")
            src.backup(out)
        dest.chmod(0o600)
        return True
    except sqlite3.Error:
        dest.unlink(missing_ok=True)  # half a shard: mypy would make it anew
        return False
    finally:
        src.close()
