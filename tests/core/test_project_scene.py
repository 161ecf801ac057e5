"""`project_scene` against real git repositories in a temporary folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_habitat.project_scene import EpochGlance, project_scene, render_project_scene

pytestmark = pytest.mark.anyio

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("a = 1\n", encoding="utf-8")
    (root / "b.py").write_text("b = 1\n", encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first commit")
    return root


async def test_a_clean_repo_shows_branch_and_head_and_no_changes(repo: Path) -> None:
    scene = await project_scene(repo)
    assert scene.git
    assert scene.git_root == str(repo)
    assert scene.branch == "main"
    assert not scene.detached
    assert scene.head is not None
    assert scene.head.subject == "first commit"
    assert scene.head.sha == git(repo, "rev-parse", "--short", "HEAD")
    assert (scene.upstream, scene.ahead, scene.behind) == (None, None, None)
    assert (scene.dirty, scene.untracked, scene.dirty_count, scene.untracked_count) == (
        [],
        [],
        0,
        0,
    )
    assert scene.verify is None


async def test_dirty_and_untracked_files_come_with_their_sizes(repo: Path) -> None:
    (repo / "a.py").write_text("a = 12345\n", encoding="utf-8")
    (repo / "b.py").unlink()
    (repo / "new dir").mkdir()
    (repo / "new dir" / "n é.txt").write_text("xyz", encoding="utf-8")
    (repo / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (repo / "noise.log").write_text("ignored", encoding="utf-8")
    scene = await project_scene(repo)
    dirty = {f.path: (f.status, f.size) for f in scene.dirty}
    untracked = {f.path: (f.status, f.size) for f in scene.untracked}
    assert dirty == {"a.py": (".M", 10), "b.py": (".D", None)}
    assert untracked == {"new dir/n é.txt": ("??", 3), ".gitignore": ("??", 6)}


async def test_an_untracked_virtualenv_is_one_entry_not_its_files(repo: Path) -> None:
    # A venv the project forgot in .gitignore (any name): git lists its every file with
    # --untracked-files=all; the scene folds it, as verify leaves it out of the change.
    for venv in (".venv", "env311"):
        (repo / venv / "lib" / "site-packages" / "pkg").mkdir(parents=True)
        (repo / venv / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
        for n in range(60):
            (repo / venv / "lib" / "site-packages" / "pkg" / f"m{n}.py").write_text("")
    (repo / "new.py").write_text("x = 1\n", encoding="utf-8")
    scene = await project_scene(repo)
    untracked = {f.path: f.size for f in scene.untracked}
    assert untracked == {".venv/": None, "env311/": None, "new.py": 6}
    assert scene.untracked_count == 3
    text = render_project_scene(scene)
    assert "?? .venv/ (a virtualenv: never part of a change)" in text
    assert "site-packages" not in text


async def test_a_staged_rename_names_its_origin(repo: Path) -> None:
    git(repo, "mv", "a.py", "c.py")
    scene = await project_scene(repo)
    assert [(f.path, f.status, f.renamed_from) for f in scene.dirty] == [("c.py", "R.", "a.py")]


async def test_long_lists_are_capped_but_counted(repo: Path) -> None:
    for n in range(7):
        (repo / f"u{n}.txt").write_text("u", encoding="utf-8")
    scene = await project_scene(repo, files_cap=3)
    assert (len(scene.untracked), scene.untracked_count, scene.files_cap) == (3, 7, 3)
    assert "… 4 more" in render_project_scene(scene)


async def test_ahead_and_behind_count_against_the_upstream(repo: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(remote))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    (repo / "a.py").write_text("a = 2\n", encoding="utf-8")
    git(repo, "commit", "-qam", "upstream moves")
    git(repo, "push", "-q", str(remote), "main")
    git(clone, "fetch", "-q")
    for n in range(2):
        (clone / f"l{n}.py").write_text("", encoding="utf-8")
        git(clone, "add", ".")
        git(clone, "commit", "-qm", f"local {n}")
    scene = await project_scene(clone)
    assert (scene.upstream, scene.ahead, scene.behind) == ("origin/main", 2, 1)
    assert "→ origin/main ahead 2 behind 1" in render_project_scene(scene)


async def test_a_detached_head_has_no_branch(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    scene = await project_scene(repo)
    assert (scene.branch, scene.detached) == (None, True)
    assert scene.head is not None


async def test_a_repo_without_commits_has_no_head(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "trunk")
    (tmp_path / "x").write_text("1", encoding="utf-8")
    scene = await project_scene(tmp_path)
    assert (scene.git, scene.branch, scene.head) == (True, "trunk", None)
    assert [f.path for f in scene.untracked] == ["x"]
    assert "(no commits yet)" in render_project_scene(scene)


async def test_a_folder_outside_git_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    plain = tmp_path / "plain"
    plain.mkdir()
    scene = await project_scene(plain)
    assert not scene.git
    assert (
        scene.note == f"{plain} is not inside a git work tree: no branch, HEAD or changes to show"
    )
    assert scene.branch is None
    assert "not inside a git work tree" in render_project_scene(scene)


async def test_no_open_project_is_said_plainly() -> None:
    scene = await project_scene(None)
    assert (scene.root, scene.git) == (None, False)
    assert scene.note == "no project is open; open one with project_open"


async def test_the_verify_epoch_and_its_staleness_come_from_the_probe(repo: Path) -> None:
    def sync_probe() -> EpochGlance:
        return EpochGlance(task="t1", state="green", snapshot="s1", stale=True)

    async def async_probe() -> EpochGlance | None:
        return None

    scene = await project_scene(repo, verify=sync_probe)
    assert scene.verify == EpochGlance(task="t1", state="green", snapshot="s1", stale=True)
    assert "verify: green on s1 — STALE" in render_project_scene(scene)
    assert (await project_scene(repo, verify=async_probe)).verify is None
