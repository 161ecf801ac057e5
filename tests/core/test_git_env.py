"""git_env: what a habitat git call keeps of the caller's environment."""

from __future__ import annotations

import pytest

from agent_habitat.git_env import REPOSITORY_VARIABLES, git_env


def test_the_repository_is_dropped_and_the_person_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in REPOSITORY_VARIABLES:
        monkeypatch.setenv(name, "/elsewhere")
    kept = {
        "GIT_AUTHOR_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@b",
        "GIT_CONFIG_PARAMETERS": "'user.name'='t'",
        "GIT_CEILING_DIRECTORIES": "/home",
        "GIT_EXEC_PATH": "/usr/lib/git-core",
    }
    for name, value in kept.items():
        monkeypatch.setenv(name, value)
    env = git_env({"GIT_OPTIONAL_LOCKS": "0"})
    assert not REPOSITORY_VARIABLES & env.keys()
    assert {k: env[k] for k in kept} == kept
    assert env["GIT_OPTIONAL_LOCKS"] == "0"
    assert {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX"} <= REPOSITORY_VARIABLES
