"""HEAD's files and an export of the project at HEAD, read without touching the repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.verify.head import HeadTree


def _head(root: Path) -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_head_content_is_read_and_a_new_file_has_none(tmp_path: Path) -> None:
    root = build_sample(tmp_path / "calc")
    (root / "src/calc/text.py").write_text("X = 1\n", encoding="utf-8")
    (root / "src/calc/new.py").write_text("Y = 2\n", encoding="utf-8")
    head = HeadTree(root, _head(root), tmp_path / "state")
    assert set(head.blobs(["src/calc/text.py", "src/calc/new.py"])) == {"src/calc/text.py"}
    lines = head.lines("src/calc/text.py")
    assert lines is not None
    assert "def shout(s: str) -> str:" in lines
    assert head.lines("src/calc/new.py") is None


def test_a_path_outside_the_repository_is_not_at_head_and_the_rest_still_is(
    tmp_path: Path,
) -> None:
    # rustc names a span in the standard library by its absolute path (`/rustc/<hash>/...`).
    root = build_sample(tmp_path / "calc")
    head = HeadTree(root, _head(root), tmp_path / "state")
    std = "/rustc/0123abcd/library/alloc/src/macros.rs"
    assert set(head.blobs([std, "../elsewhere.rs", "src/calc/text.py"])) == {"src/calc/text.py"}
    assert head.lines(std) is None


def test_the_export_is_the_tree_at_head_and_is_reused_until_head_moves(tmp_path: Path) -> None:
    root = build_sample(tmp_path / "calc")
    (root / "src/calc/text.py").write_text("X = 1\n", encoding="utf-8")
    head = HeadTree(root, _head(root), tmp_path / "state")
    export = head.export()
    assert "def shout" in (export / "src/calc/text.py").read_text(encoding="utf-8")
    (export / "scratch").write_text("kept while HEAD stays", encoding="utf-8")
    assert head.export() == export
    assert (export / "scratch").exists()
    assert not (root / ".git" / "worktrees").exists()


def test_a_project_in_a_sub_folder_exports_only_its_own_tree(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "mono")
    sub = repo / "services" / "api"
    sub.mkdir(parents=True)
    (sub / "app.py").write_text("X = 1\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "api"],
        cwd=repo,
        check=True,
    )
    head = HeadTree(sub, _head(repo), tmp_path / "state")
    assert head.blobs(["app.py"]).keys() == {"app.py"}
    assert sorted(p.name for p in head.export().iterdir()) == [".habitat-head", "app.py"]


def test_the_ignored_files_are_laid_over_only_for_a_rung_that_uses_the_export(
    tmp_path: Path,
) -> None:
    # Made ahead beside the first rungs, the export is HEAD's tree alone; the rung that
    # uses it gets the working tree's ignored files (a generated `_version.py`) laid over.
    root = build_sample(tmp_path / "calc")
    (root / ".gitignore").write_text("_version.py\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ignore"],
        cwd=root,
        check=True,
    )
    (root / "src/calc/_version.py").write_text("VERSION = '1'\n", encoding="utf-8")
    head = HeadTree(root, _head(root), tmp_path / "state")
    ahead = head.export(overlay=False)
    assert not (ahead / "src/calc/_version.py").exists()
    assert (head.export() / "src/calc/_version.py").read_text(encoding="utf-8") == "VERSION = '1'\n"
