"""Which checkout sits at a path, and whether a trust entry is for it: the parts of `trust`
that need no model, standard library only, so `habitat status` with no host tells trust from
`trust.json` as `trust` does (`cli/status_quiet.py`). `trust` builds its models on these."""

from __future__ import annotations

import shlex
import subprocess

from .git_env import git_env
from .workspace import scm_root

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["FILE", "NOT_TRUSTED", "identity_of", "not_trusted", "same_checkout"]

NOT_TRUSTED = "not trusted: nothing of this project has run"
FILE = "trust.json"
"""In the project's state folder."""
_GIT_SECONDS = 10.0


def not_trusted(root: Path) -> str:
    """The summary of a project not trusted (yet), with the ways to trust it."""
    return (
        f"{NOT_TRUSTED}; trust it with the project_trust tool (it asks the "
        f"person), `habitat trust --project {shlex.quote(str(root))}` in a terminal, "
        "the /project_trust prompt, or a verify"
    )


def identity_of(root: Path) -> dict[str, object]:
    """The identity of the checkout at `root` (runs git, never the project's code): the
    fields of `trust.CheckoutIdentity`, the git ones only when there is a work tree."""
    st = root.stat()
    identity: dict[str, object] = {"root": str(root), "device": st.st_dev, "inode": st.st_ino}
    top = scm_root(root)
    if top is None:
        return identity
    try:
        git = (top / ".git").stat()
        identity["git_device"], identity["git_inode"] = git.st_dev, git.st_ino
    except OSError:
        return identity
    try:
        # rev-list reads objects only: no hook, no index, no fsmonitor runs.
        done = subprocess.run(
            ["git", "-C", str(top), "rev-list", "--max-parents=0", "HEAD"],
            capture_output=True,
            timeout=_GIT_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
            env=git_env({"GIT_TERMINAL_PROMPT": "0"}),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        import logging

        logging.getLogger("agent_habitat.trust").info("no root commits for %s: %s", top, exc)
        return identity
    if done.returncode == 0:
        identity["root_commits"] = sorted(done.stdout.decode("ascii", "replace").split())
    return identity


def same_checkout(one: Mapping[str, object], other: Mapping[str, object]) -> bool:
    """Whether two identities (`identity_of`'s fields, a missing one as its default) are of
    the same checkout."""
    for name in ("root", "device", "inode", "git_device", "git_inode"):
        if one.get(name) != other.get(name):
            return False
    mine, theirs = one.get("root_commits"), other.get("root_commits")
    if not isinstance(mine, list) or not isinstance(theirs, list) or not mine or not theirs:
        return True  # a history that began since (or a tree with none): same checkout
    return bool(set(mine) & set(theirs))
