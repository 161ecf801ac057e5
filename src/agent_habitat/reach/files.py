"""The host's files in the workspace state folder, and the checks that keep them private.

`host.sock` (the unix socket), `stdio.sock` (where `habitat mcp` hands over its client's
stdio), `host.lock` (held by the running host; names its pid and endpoints), `token` (the
bearer token for TCP), `host.log` (the detached host's output).
The folder and everything in it belong to the user alone: the host refuses to start when
the folder or a file in it is writable by group or others, or owned by someone else.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agent_habitat.errors import HabitatError
from agent_habitat.workspace import Workspace, write_private

__all__ = ["HostFiles", "UnsafePermissionsError"]

# A unix socket path longer than this (sun_path, 108 bytes on Linux, 104 on macOS) cannot bind.
_MAX_SOCKET_PATH = 104


class UnsafePermissionsError(HabitatError):
    """The state folder or one of the host's files is open to other users."""


class HostFiles:
    """Where one workspace's host keeps its socket, lock, token and log."""

    __slots__ = ("workspace",)

    def __init__(self, workspace: Workspace) -> None:
        # A plain class: the CLI finds its host through it on every call (see `Workspace`).
        self.workspace = workspace

    @property
    def state_dir(self) -> Path:
        return self.workspace.state_dir

    @property
    def socket(self) -> Path:
        return self.state_dir / "host.sock"

    @property
    def stdio_socket(self) -> Path:
        """Where the bridge hands the host its client's stdin and stdout (`reach/handoff`)."""
        return self.state_dir / "stdio.sock"

    @property
    def lock(self) -> Path:
        return self.state_dir / "host.lock"

    @property
    def token_file(self) -> Path:
        return self.state_dir / "token"

    @property
    def log(self) -> Path:
        return self.state_dir / "host.log"

    def prepare(self) -> None:
        """Create the state folder (0700) if missing; refuse it, or our files, if unsafe."""
        self.check_private()
        self.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.state_dir, 0o700)
        if len(os.fsencode(self.socket)) >= _MAX_SOCKET_PATH:
            raise HabitatError(
                f"the host socket path {self.socket} is too long for a unix socket; "
                "set HABITAT_HOME to a shorter folder"
            )

    def check_private(self) -> None:
        """Raise `UnsafePermissionsError` naming the first path others could write to."""
        for path in (self.state_dir, self.socket, self.stdio_socket, self.lock, self.token_file):
            try:
                st = path.lstat()
            except FileNotFoundError:
                continue
            problem = None
            if st.st_uid != os.getuid():
                problem = f"is owned by uid {st.st_uid}, not by you ({os.getuid()})"
            elif st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                problem = f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
            if problem:
                fix = "chmod 700" if path == self.state_dir else "chmod 600"
                raise UnsafePermissionsError(
                    f"refusing to start the host: {path} {problem}; "
                    f"fix it with `{fix} {path}` (or remove it)"
                )

    def token(self) -> str:
        """The workspace's bearer token, created (random, mode 0600) on first use."""
        try:
            text = self.token_file.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            text = ""
        if text:
            return text
        import secrets  # here: the CLI finds the host through this module on every call

        value = secrets.token_urlsafe(32)
        # O_EXCL: two hosts racing to create it must not end up with different tokens.
        try:
            fd = os.open(self.token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return self.token_file.read_text(encoding="utf-8").strip()
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(value + "\n")
        return value

    def write_token(self, value: str) -> None:
        """Replace the token file with `value` (0600), atomically: a reader sees the old
        token or the new one, never a half-written file."""
        write_private(self.token_file, value + "\n")

    def rotate_token(self) -> str:
        """A fresh random token, written as the workspace's token; the old one is gone."""
        import secrets

        value = secrets.token_urlsafe(32)
        self.write_token(value)
        return value
