"""Where a workspace's state lives, as plain strings: `$HABITAT_HOME/<namespace>/<name>-<hash>/`.

The one rule for it, used by `workspace.Workspace` and by the CLI's light path, which finds a
running host with this alone: `pathlib` (with `re`, `urllib` and `fnmatch`) and `hashlib` (an
OpenSSL binding) are a large part of what a `habitat run` through a host would otherwise
spend before it sends its request. Also the rule for a state file no other user may change.
"""

from __future__ import annotations

import os

__all__ = ["habitat_home", "open_to_others", "project_root", "state_dir"]


def habitat_home() -> str:
    """`$HABITAT_HOME`, else `$XDG_STATE_HOME/agent-habitat`, else `~/.local/state/…`."""
    if home := os.environ.get("HABITAT_HOME"):
        return os.path.expanduser(home)
    if xdg := os.environ.get("XDG_STATE_HOME"):
        return os.path.join(os.path.expanduser(xdg), "agent-habitat")
    return os.path.join(os.path.expanduser("~"), ".local", "state", "agent-habitat")


def project_root(start: str | None = None) -> str:
    """The git work tree around `start` (default: the cwd), else `start`; resolved."""
    start = os.path.realpath(start if start is not None else os.getcwd())
    candidate = start
    while True:
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return start
        candidate = parent


def state_dir(root: str, namespace: str = "workspaces") -> str:
    """The state folder of the project at `root` (resolved here): its name, then the start
    of the sha256 of its path, so two projects of one name keep apart."""
    root = os.path.realpath(root)
    digest = _sha256_hex(root.encode())[:12]
    base = os.path.basename(root)
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in base) or "root"
    return os.path.join(habitat_home(), namespace, f"{name}-{digest}")


def _sha256_hex(data: bytes) -> str:
    # The interpreter's own sha256 (`_sha2`, `_sha256` before 3.12) where it has one:
    # `hashlib` first loads OpenSSL's binding, a few milliseconds of every CLI call.
    import sys

    try:
        module = __import__("_sha2" if sys.version_info >= (3, 12) else "_sha256")
    except ImportError:
        pass
    else:
        return str(module.sha256(data).hexdigest())
    import hashlib

    return hashlib.sha256(data).hexdigest()


def open_to_others(info: os.stat_result) -> bool:
    """Whether a state file or folder with this `lstat` may be changed by another user:
    someone else owns it, or its group or others may write it."""
    return info.st_uid != os.getuid() or bool(info.st_mode & 0o022)
