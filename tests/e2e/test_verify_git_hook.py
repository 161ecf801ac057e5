"""`habitat verify` as a git hook: git exports the repository it is committing to (`GIT_DIR`
in a linked worktree, `GIT_INDEX_FILE`), and the habitat's own git calls must not take it.

Real git, a real hook, the CLI in its own process: a project in a sub-folder of a linked
worktree, the hook `habitat verify --project calc`, the commit of what the person staged.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.git_env import git_env
from git_tree import IGNORED, git

pytestmark = pytest.mark.e2e


def _git_out(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], env=git_env(), cwd=root, capture_output=True, check=True, text=True
    )
    return done.stdout


def test_a_pre_commit_hook_in_a_linked_worktree_verifies_the_staged_change(tmp_path: Path) -> None:
    main = tmp_path / "mono"
    build_sample(main / "calc")
    shutil.rmtree(main / "calc" / ".git")
    (main / ".gitignore").write_text(IGNORED, encoding="utf-8")
    git(main, "init", "-q", "-b", "main")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "init")
    tree = tmp_path / "wt"
    git(main, "worktree", "add", "-q", "-b", "change", str(tree))
    verdict = tmp_path / "verdict.json"
    hook = Path(_git_out(main, "rev-parse", "--git-common-dir").strip())
    hook = (main / hook / "hooks" / "pre-commit").resolve()
    command = [sys.executable, "-m", "agent_habitat", "verify", "--project", "calc"]
    command += ["--rung", "diagnose.files", "--json", "--wait"]
    hook.write_text(
        f"#!/bin/sh\nexec {shlex.join(command)} > {shlex.quote(str(verdict))}\n", encoding="utf-8"
    )
    hook.chmod(0o755)
    text = tree / "calc/src/calc/text.py"
    text.write_text(text.read_text(encoding="utf-8") + "\nX = 1\n", encoding="utf-8")
    (tree / "calc/README.md").write_text("not staged\n", encoding="utf-8")
    git(tree, "add", "calc/src/calc/text.py")
    staged = _git_out(tree, "write-tree").strip()

    git(tree, "commit", "-qm", "change")

    result = json.loads(verdict.read_text(encoding="utf-8"))
    assert result["touched"] == ["README.md", "src/calc/text.py"]
    assert result["state"] == "green"
    assert result["head"] == _git_out(main, "rev-parse", "main").strip()
    # The commit holds what was staged, the unstaged edit stays unstaged, main is untouched.
    assert _git_out(tree, "rev-parse", "HEAD^{tree}").strip() == staged
    assert _git_out(tree, "status", "--porcelain").splitlines() == [" M calc/README.md"]
    assert _git_out(main, "status", "--porcelain") == ""
    assert _git_out(main, "log", "--format=%s", "main").splitlines() == ["init"]


def test_the_sample_is_its_own_repository_under_an_exported_git_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `git bisect run` and hooks export GIT_DIR: `git init` there re-initialised the outer one.
    outer = tmp_path / "outer"
    build_sample(outer)
    before = _git_out(outer, "rev-parse", "HEAD")
    monkeypatch.setenv("GIT_DIR", ".git")
    monkeypatch.setenv("GIT_WORK_TREE", str(outer))
    monkeypatch.setenv("GIT_INDEX_FILE", str(outer / ".git" / "index"))
    monkeypatch.chdir(outer)
    inner = build_sample(tmp_path / "inner")
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert _git_out(outer, "rev-parse", "HEAD") == before
    assert _git_out(outer, "status", "--porcelain") == ""
    assert _git_out(inner, "rev-parse", "--show-toplevel").strip() == str(inner)
    assert _git_out(inner, "log", "--format=%s").splitlines() == ["sample"]


def test_a_host_a_hook_started_gives_its_tabs_no_hook_repository(
    tmp_path: Path, habitat_home: Path
) -> None:
    # A pre-commit hook's `habitat verify` starts the host; the agent's tabs of the next hours
    # run in it, and a GIT_DIR or GIT_INDEX_FILE of that commit would point their git elsewhere.
    root = build_sample(tmp_path / "calc")
    env = {**os.environ, "HABITAT_HOME": str(habitat_home), "GIT_INDEX_FILE": ".git/index"}
    env |= {"GIT_DIR": str(root / ".git"), "GIT_PREFIX": "src/", "LOOK_HOOK_ME": "kept"}

    def habitat(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_habitat", *argv, "--project", str(root)],
            env=env,
            capture_output=True,
            text=True,
            # A bound for a hung process, not a speed claim: a host's start took over 60 s
            # of wall on the 2-core machine at load 20.
            timeout=180,
            check=False,
        )

    started = habitat("host", "start")
    assert started.returncode == 0, started.stderr
    try:
        shown = habitat("run", 'echo "${GIT_DIR-none} ${GIT_INDEX_FILE-none} ${GIT_PREFIX-none}"')
        kept = habitat("run", 'echo "$LOOK_HOOK_ME"')
    finally:
        stopped = habitat("host", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert shown.returncode == 0, shown.stderr
    assert "none none none" in shown.stdout
    assert "kept" in kept.stdout  # the rest of the starter's environment stays
