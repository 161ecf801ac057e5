"""The workspace host, started behind a shell command a person typed at a terminal.

Without a host, a shell verb opens the workspace in its own process: about half a second of
imports and set-up each time. With one, it is a request over the host's socket (tens of
milliseconds). So when a person at a terminal runs a shell command and no host serves the
workspace, the command is answered here as before, and only once it is done (its output
printed, its state closed) is the host started, detached: the first command costs what it
did, and the next ones ask the host (`cli.host_verbs` waits for one still starting). Scripts,
pipes and CI (no terminal, or `CI` set) keep the one-shot path and start nothing, as
`habitat verify` does (`in_a_terminal`); so does a command refused as bad input (exit 2:
nothing of the project ran, and a typo is not a reason to start a process that stays).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    import argparse
    from pathlib import Path

__all__ = ["in_a_terminal", "start_behind", "start_host"]


def in_a_terminal() -> bool:
    """A person at a terminal (not a script, a pipe, CI): worth starting a host for."""
    return sys.stdin.isatty() and sys.stderr.isatty() and not os.environ.get("CI")


def start_behind(args: argparse.Namespace) -> None:
    """Start the host of the workspace `args` names when a person at a terminal ran the
    command and none runs; says so on stderr. Best effort: a host that cannot start leaves
    the next command on the one-shot path, which says what is wrong."""
    if not in_a_terminal():
        return
    from ..errors import HabitatError
    from .common import project_root

    try:
        root = project_root(args)
    except HabitatError:
        return
    start_host(root)


def start_host(root: Path) -> None:
    """Start the host of the workspace at `root` when none runs, and say so on stderr (a
    person at a terminal asked: the caller checks `in_a_terminal`). Best effort."""
    from ..errors import HabitatError
    from ..reach.launcher import spawn_host

    try:
        pid = spawn_host(root)
    except (HabitatError, OSError):
        return
    if pid is not None:
        sys.stderr.write(
            f"habitat: started the workspace host (pid {pid}) so the next commands are quick; "
            "`habitat host stop` ends it, or it exits after 30 idle minutes\n"
        )
