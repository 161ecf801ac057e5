"""HEAD's mypy cache begun as a copy of the working tree's (verify/rungs/mypy_head_cache.py):
the copy is whole and consistent, made once, and mypy's answer from it is a cold run's."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.verify.rungs.mypy_head_cache import seed_cache

_FLAGS = ["--no-error-summary", "--show-error-codes", "--no-color-output"]


def _shard(path: Path, rows: list[tuple[str, bytes]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE files2 (path TEXT PRIMARY KEY, mtime REAL, data BLOB)")
        db.executemany("INSERT INTO files2 VALUES (?, 1.5, ?)", rows)
    db.close()


def test_the_shards_and_files_are_copied_once_with_their_times(tmp_path: Path) -> None:
    source, target = tmp_path / "tree", tmp_path / "head"
    _shard(source / "3.12" / "cache.0.db", [("builtins.meta.ff", b"meta"), ("os.data.ff", b"x")])
    (source / "3.12" / "pkg").mkdir()
    data = source / "3.12" / "pkg" / "mod.data.json"
    data.write_text("{}", encoding="utf-8")
    os.utime(data, ns=(1_000_000_000, 1_234_567_891))
    (source / "CACHEDIR.TAG").write_text("tag", encoding="utf-8")

    assert seed_cache(source, target)
    with sqlite3.connect(target / "3.12" / "cache.0.db") as db:
        rows = sorted(db.execute("SELECT path, mtime, data FROM files2"))
    db.close()
    assert rows == [("builtins.meta.ff", 1.5, b"meta"), ("os.data.ff", 1.5, b"x")]
    copied = target / "3.12" / "pkg" / "mod.data.json"
    assert copied.stat().st_mtime_ns == 1_234_567_891  # mypy compares a data file's mtime
    assert (target / "3.12" / "cache.0.db").stat().st_mode & 0o777 == 0o600
    assert not (target / "CACHEDIR.TAG").exists()  # only the versions' folders

    # Once: a cache HEAD's checks have made is never overwritten.
    _shard(source / "3.12" / "cache.1.db", [("re.meta.ff", b"new")])
    assert not seed_cache(source, target)
    assert not (target / "3.12" / "cache.1.db").exists()


def test_nothing_to_copy_from(tmp_path: Path) -> None:
    assert not seed_cache(tmp_path / "absent", tmp_path / "head")
    assert not (tmp_path / "head").exists()


def _mypy(cwd: Path, cache: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", *_FLAGS, *extra, "--cache-dir", str(cache), "pkg"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return done


@pytest.mark.e2e
def test_mypy_from_the_copy_says_what_a_cold_run_says(tmp_path: Path) -> None:
    tree = tmp_path / "tree" / "pkg"
    tree.mkdir(parents=True)
    (tree / "__init__.py").write_text("from pkg.a import f\n", encoding="utf-8")
    (tree / "a.py").write_text("def f() -> int:\n    return 1\n", encoding="utf-8")
    (tree / "b.py").write_text(
        "from pkg.a import f\n\nx: int = f()\ny: str = 1\n", encoding="utf-8"
    )
    head = tmp_path / "head"
    shutil.copytree(tmp_path / "tree", head)
    # The working tree's change makes b.py's use of f() an error; HEAD has only `y`'s.
    (tree / "a.py").write_text("def f() -> str:\n    return ''\n", encoding="utf-8")
    mine = _mypy(tmp_path / "tree", tmp_path / "tree-cache").stdout
    assert mine.count("error:") == 2, mine

    assert seed_cache(tmp_path / "tree-cache", tmp_path / "head-cache")
    seeded_run = _mypy(head, tmp_path / "head-cache", "-v")
    # The standard library came from the copy; pkg.a, changed, was checked again.
    assert "Metadata fresh for builtins" in seeded_run.stderr
    assert "Metadata fresh for pkg.a" not in seeded_run.stderr
    seeded, cold = seeded_run.stdout, _mypy(head, tmp_path / "cold-cache").stdout
    assert seeded == cold
    assert seeded.count("error:") == 1
    assert 'type "int", variable has type "str"' in seeded
