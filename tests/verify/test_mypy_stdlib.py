"""The standard library's mypy cache shared by a user's workspaces
(verify/rungs/mypy_stdlib.py): only the standard library's entries are kept, an entry there
is never overwritten, and mypy's answer from a workspace begun with them is a cold run's,
byte for byte, also when the options differ (then the entries are not used)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.verify.rungs import mypy_stdlib

_FLAGS = ["--no-error-summary", "--show-error-codes", "--no-color-output", "--show-column-numbers"]


def _shard(path: Path, rows: list[tuple[str, bytes]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE files2 (path TEXT UNIQUE NOT NULL, mtime REAL, data BLOB)")
        db.executemany("INSERT INTO files2 VALUES (?, 1.5, ?)", rows)
    db.close()


def _rows(path: Path) -> list[tuple[str, float, bytes]]:
    with sqlite3.connect(path) as db:
        rows = sorted(db.execute("SELECT path, mtime, data FROM files2"))
    db.close()
    return rows


def test_only_the_standard_librarys_entries_are_kept_and_none_is_overwritten(
    tmp_path: Path,
) -> None:
    cache, shared = tmp_path / "ws-cache", tmp_path / "shared"
    _shard(
        cache / "3.12" / "cache.3.db",
        [
            ("builtins.meta.ff", b"b"),
            ("os/path.data.ff", b"p"),
            ("collections/__init__.meta_ex.ff", b"c"),
            ("isodate/isodates.meta.ff", b"project"),
            ("requests.data.ff", b"installed"),
            ("@plugins_snapshot.json", b"{}"),
        ],
    )
    assert mypy_stdlib.publish(cache, shared) == 3
    kept = shared / "3.12" / "cache.3.db"
    assert [r[0] for r in _rows(kept)] == [
        "builtins.meta.ff",
        "collections/__init__.meta_ex.ff",
        "os/path.data.ff",
    ]
    assert kept.stat().st_mode & 0o777 == 0o600
    assert not list(shared.rglob("*.tmp"))  # written aside, renamed over the shard
    assert (shared / "3.12").stat().st_mode & 0o777 == 0o700

    # A later run adds what the store lacks; what it has stays as it was.
    _shard(cache / "3.12" / "cache.4.db", [("re.meta.ff", b"r")])
    with sqlite3.connect(cache / "3.12" / "cache.3.db") as db:
        db.execute("UPDATE files2 SET data = ? WHERE path = 'builtins.meta.ff'", (b"other",))
    db.close()
    assert mypy_stdlib.publish(cache, shared) == 1
    assert ("builtins.meta.ff", 1.5, b"b") in _rows(kept)
    assert _rows(shared / "3.12" / "cache.4.db") == [("re.meta.ff", 1.5, b"r")]


def test_the_shared_folder_is_in_the_habitat_home_and_keyed_by_the_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HABITAT_HOME", str(tmp_path / "home"))
    plain = mypy_stdlib.shared_dir(["--python-version", "3.12"])
    assert plain is not None
    assert plain.parent == tmp_path / "home" / "mypy-stdlib"
    assert plain == mypy_stdlib.shared_dir(["--python-version", "3.12"])
    assert plain != mypy_stdlib.shared_dir(["--python-version", "3.11"])


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


def _project(at: Path, body: str) -> Path:
    (at / "pkg").mkdir(parents=True)
    (at / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (at / "pkg" / "mod.py").write_text(body, encoding="utf-8")
    return at


@pytest.mark.e2e
def test_a_second_project_begun_from_the_first_ones_says_what_a_cold_run_says(
    tmp_path: Path,
) -> None:
    first = _project(tmp_path / "first", "import re\n\nx: int = re.compile('a').pattern\n")
    _mypy(first, tmp_path / "first-cache")
    shared = tmp_path / "shared"
    assert mypy_stdlib.publish(tmp_path / "first-cache", shared) > 0
    assert not [r for db in shared.rglob("*.db") for r in _rows(db) if r[0].startswith("pkg")]

    second = _project(
        tmp_path / "second",
        "import os.path\nimport json\n\n"
        "def f(p: str) -> int:\n    return os.path.join(p, json.dumps(1))\n\n"
        "y: list[str] = [1]\n",
    )
    for extra in ((), ("--strict",)):
        cache = tmp_path / f"second-cache{len(extra)}"
        assert mypy_stdlib.seed(shared, cache)
        seeded_run = _mypy(second, cache, "-v", *extra)
        seeded, cold = seeded_run.stdout, _mypy(second, tmp_path / f"cold{len(extra)}", *extra)
        assert seeded == cold.stdout
        assert seeded.count("error:") >= 2, seeded
        if extra:  # other options: the entries are not used, and the answer is the same
            assert "Metadata abandoned for builtins: options differ" in seeded_run.stderr
        else:
            assert "Metadata fresh for builtins" in seeded_run.stderr
