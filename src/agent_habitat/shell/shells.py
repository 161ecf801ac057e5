"""Which shells exist here, and which one a tab uses."""

from __future__ import annotations

import functools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError

__all__ = [
    "KNOWN_SHELLS",
    "ShellInfo",
    "ask_version",
    "available_shells",
    "default_shell",
    "resolve_shell",
    "shell_version",
]

KNOWN_SHELLS = ("bash", "sh", "zsh", "fish", "pwsh")
_ALIASES = {"dash": "sh", "ash": "sh", "powershell": "pwsh"}


@dataclass(frozen=True)
class ShellInfo:
    kind: str
    """bash, sh, zsh, fish or pwsh."""
    executable: str


def _kind_of(executable: str) -> str | None:
    name = Path(executable).name
    name = _ALIASES.get(name, name)
    return name if name in KNOWN_SHELLS else None


def available_shells() -> dict[str, str]:
    """Known shells installed here: kind → executable."""
    return dict(_available(os.environ.get("PATH", "")))


@functools.lru_cache(maxsize=8)
def _available(path: str) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for kind in KNOWN_SHELLS:
        if exe := shutil.which(kind, path=path):
            found[kind] = exe
    return tuple(found.items())


def default_shell() -> ShellInfo:
    """`$SHELL` when it is a known shell, else bash, else sh."""
    env_shell = os.environ.get("SHELL", "")
    kind = _kind_of(env_shell) if env_shell else None
    if kind and os.access(env_shell, os.X_OK):
        return ShellInfo(kind, env_shell)
    shells = available_shells()
    for kind in ("bash", "sh"):
        if kind in shells:
            return ShellInfo(kind, shells[kind])
    raise UsageError("no usable shell: neither $SHELL, bash nor sh was found on PATH")


def resolve_shell(name: str | None) -> ShellInfo:
    """The shell for `name` (a kind or a path); None means the default shell."""
    if name is None:
        return default_shell()
    if os.sep in name:
        kind = _kind_of(name)
        if kind and os.access(name, os.X_OK):
            return ShellInfo(kind, name)
    shells = available_shells()
    if os.sep not in name:
        kind = _ALIASES.get(name, name)
        if kind in shells:
            return ShellInfo(kind, shells[kind])
    have = ", ".join(sorted(shells)) or "none"
    raise UsageError(
        f"unknown or missing shell {name!r}; available here: {have} "
        f"(supported kinds: {', '.join(KNOWN_SHELLS)})"
    )


# executable → first line of its `--version`; a shell's version does not change under us.
_VERSIONS: dict[str, str] = {}


async def shell_version(executable: str) -> str:
    """First line of `--version`, or 'unknown' (sh/dash has no version flag).

    Asked once per executable, in a worker thread: the subprocess must not hold up the
    event loop (up to its 5 s timeout for a shell that hangs).
    """
    if executable not in _VERSIONS:
        import anyio.to_thread  # here: `habitat scene` resolves shell kinds without anyio

        _VERSIONS[executable] = await anyio.to_thread.run_sync(ask_version, executable)
    return _VERSIONS[executable]


def ask_version(executable: str) -> str:
    """`shell_version`'s answer, asked now in this thread (a process with no event loop)."""
    import subprocess  # here, as anyio above: the scene's fast path never asks a version

    try:
        out = subprocess.run(
            [executable, "--version"],
            capture_output=True,
            text=True,
            timeout=5,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    line = (out.stdout or "").strip().splitlines()
    return line[0] if out.returncode == 0 and line else "unknown"
