"""The clean venv with the built wheel that tests/e2e/test_wheel.py runs, built once a session.

Building it is mostly waiting on PyPI (about 3 minutes on a loaded machine, a few seconds
of CPU), so the root conftest starts it in the background as soon as a session that holds
a wheel test begins (`start`), and the wheel tests wait for it (`wait`) while the other
tests run. One builder across xdist workers: the first to create `started` spawns it,
handing it the held lock, so a waiter blocks until it ends. A builder that was killed
leaves neither `done` nor `failed`: the waiter then builds in its own process.

Run as a script (`python wheel_venv.py FOLDER`), it is that builder.
Imported as `wheel_venv`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = [
    "FIXTURE",
    "INSTALL_TIMEOUT_SECONDS",
    "SOURCE",
    "build_wheel",
    "folder_of",
    "start",
    "wait",
    "wanted",
]

SOURCE = Path(__file__).resolve().parents[1]
# Building and installing from PyPI; generous, since the index may be slow.
INSTALL_TIMEOUT_SECONDS = 600
FIXTURE = "venv"
"""The wheel tests' fixture; a session that selects a test using it wants the venv."""


def folder_of(basetemp: Path) -> Path:
    """The session's folder for the venv: under xdist every worker has its own basetemp,
    and their parent is shared by the run."""
    shared = basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp
    return shared / "wheel-venv"


def wanted(items: list[pytest.Item]) -> bool:
    """Whether the session's selected tests include one in a wheel test module that uses
    the venv."""
    return any(
        item.path.name == "test_wheel.py" and FIXTURE in getattr(item, "fixturenames", ())
        for item in items
    )


def start(folder: Path) -> subprocess.Popen[bytes] | None:
    """Spawn the builder unless another process of this session already did; the caller
    owns the process it gets (to wait for it, or kill it if the session stops early)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(folder / "started", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return None
    with open(folder / "lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the child inherits it: released when it ends
        with open(folder / "build.log", "wb") as log:
            return subprocess.Popen(
                [sys.executable, __file__, str(folder)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(lock.fileno(),),
            )


def wait(folder: Path) -> Path:
    """The venv, once built (here, if no builder ran or it was killed); AssertionError
    with pip's output if the build failed."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "done").exists() and not (folder / "failed").exists():
            _build_recorded(folder)
    failed = folder / "failed"
    assert not failed.exists(), failed.read_text(encoding="utf-8")
    return folder / "venv"


def build_wheel(folder: Path) -> Path:
    """The project's wheel, built by its own backend (hatchling) in this process."""
    from hatchling.builders.wheel import WheelBuilder

    (wheel,) = WheelBuilder(str(SOURCE)).build(directory=str(folder), versions=["standard"])
    return Path(wheel)


def _run(*argv: str | Path) -> None:
    done = subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_SECONDS,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{argv} failed:\n{done.stdout}\n{done.stderr}")


def _build(folder: Path) -> None:
    wheel = build_wheel(folder / "wheels")
    venv = folder / "venv"
    # No pip in the venv (ensurepip costs tens of seconds here): this interpreter's pip
    # installs into it, as pipx and uv install into theirs. No bytecode compiled ahead.
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        venv / "bin" / "python",
        "install",
        "-q",
        "--no-compile",
        wheel,
    )


def _build_recorded(folder: Path) -> None:
    try:
        _build(folder)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        (folder / "failed").write_text(str(exc), encoding="utf-8")
        return
    (folder / "done").touch()


if __name__ == "__main__":
    _build_recorded(Path(sys.argv[1]))
