"""The environment for every git process the habitat itself starts: the caller's, without
the variables that tell git which repository, work tree or index to use.

A git hook exports them to its children (`pre-commit`: `GIT_INDEX_FILE=.git/index`, relative
to the work tree's top; in a linked worktree also `GIT_DIR`), and so does `git bisect run`
or a `git rebase --exec`. `habitat verify` run from such a hook would carry them into its own
git calls, which run in the project's folder or another one: a relative index resolved from
a sub-folder names no index at all (every file of HEAD looked deleted), a `GIT_DIR` without
`GIT_WORK_TREE` makes the current folder the work tree's top, a `git init` lands in the hook's
repository. The habitat finds the repository from the folder it names, as `git -C` would.

The habitat's own git calls take this, and so does a workspace host as it starts: it outlives
the hook that started it, and its tabs and tests serve the hours after. A tab's command and the
project's tests in a habitat that is not a host keep the caller's environment, hook variables
included. Standard library only.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

__all__ = ["REPOSITORY_VARIABLES", "git_env", "git_show"]

REPOSITORY_VARIABLES = frozenset(
    {
        # `git rev-parse --local-env-vars` (what git itself clears on entering another
        # repository) less the configuration ones (`GIT_CONFIG*`: a person's `git -c`, kept)
        # and the replace-object switches (a reading choice, not a location).
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_IMPLICIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_GRAFT_FILE",
        "GIT_PREFIX",
        "GIT_INTERNAL_SUPER_PREFIX",
        "GIT_SHALLOW_FILE",
        # Not in that list, yet they pick what a command reads: the refs' namespace, and a
        # pre-receive hook's quarantined object folder.
        "GIT_NAMESPACE",
        "GIT_QUARANTINE_PATH",
    }
)
"""Dropped from a habitat git call's environment. `GIT_CEILING_DIRECTORIES` and
`GIT_DISCOVERY_ACROSS_FILESYSTEM` stay: a person sets them to bound the search, no hook does."""


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without `REPOSITORY_VARIABLES`, then `extra` laid over it."""
    env = {k: v for k, v in os.environ.items() if k not in REPOSITORY_VARIABLES}
    if extra:
        env.update(extra)
    return env


def git_show(root: Path, commit: str, rel: str) -> bytes | None:
    """File `rel` (relative to `root`) as it is in `commit`; None when git cannot show it (not
    in that commit, not a repository). Blocks: a git process."""
    shown = subprocess.run(
        ["git", "show", f"{commit}:./{rel}"],
        env=git_env(),
        cwd=root,
        capture_output=True,
        check=False,
        timeout=60,
    )
    return shown.stdout if shown.returncode == 0 else None
