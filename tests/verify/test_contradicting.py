"""Which written paths make the tree differ from a snapshot, against a real git repository:
a path clean at the snapshot counts only with a content other than HEAD's."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agent_habitat.verify.runner.epochs import contradicting
from agent_habitat.verify.toolchains import snapshot_of
from git_tree import git


def _repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.go").write_text("package pkg\n\nconst A = 1\n", encoding="utf-8")
    (root / "b.txt").write_text("b\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def test_a_write_of_heads_content_to_a_clean_file_is_no_change(tmp_path: Path) -> None:
    # xxhash v2.3.0: a file_write putting HEAD's test file back, then verify_run at once;
    # the watcher's report of that write came during the 30 ms climb, which then said
    # "xxhash_test.go changed while it ran" and stayed stale on the very tree it verified.
    root = _repo(tmp_path / "r")
    clean = snapshot_of(root)
    a = root / "pkg" / "a.go"
    a.write_text(a.read_text(encoding="utf-8"), encoding="utf-8")  # same bytes, new mtime
    assert contradicting(root, clean, ["pkg/a.go", "b.txt"]) == []
    a.write_text("package pkg\n\nconst A = 2\n", encoding="utf-8")
    (root / "new.txt").write_text("n\n", encoding="utf-8")
    (root / "b.txt").unlink()
    (root / "gone-tmp").write_text("", encoding="utf-8")
    (root / "gone-tmp").unlink()  # an editor's temp file, never in HEAD
    found = contradicting(root, clean, ["pkg/a.go", "new.txt", "b.txt", "gone-tmp"])
    assert sorted(found) == ["b.txt", "new.txt", "pkg/a.go"]


def test_a_file_dirty_at_the_snapshot_counts_by_its_content_then(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    a = root / "pkg" / "a.go"
    a.write_text("package pkg\n\nconst A = 3\n", encoding="utf-8")
    dirty = snapshot_of(root)
    a.write_text("package pkg\n\nconst A = 3\n", encoding="utf-8")
    assert contradicting(root, dirty, ["pkg/a.go"]) == []
    a.write_text("package pkg\n\nconst A = 1\n", encoding="utf-8")  # HEAD's, not the snapshot's
    assert contradicting(root, dirty, ["pkg/a.go"]) == ["pkg/a.go"]
