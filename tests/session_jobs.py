"""Long, mostly waiting commands a test module needs once a session, begun with the session.

The conformance suite (tests/host/test_conformance.py: installs Node 22 and the suite from
npm, then runs its scenarios; minutes, most of them a wait on the registry) is such a job.
The root conftest starts it in the background when a session selects a test that needs
it (`start`); that test's fixture then takes its outcome (`wait`) while the other tests
ran meanwhile. One runner across xdist workers: the first to create `started` spawns it,
handing it the held lock, so a waiter blocks until it ends; a runner that was killed
leaves no `returncode`, and the waiter then runs the command in its own process.

Run as a script (`python session_jobs.py FOLDER TIMEOUT ARGV...`), it is that runner.
Imported as `session_jobs`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["CONFORMANCE", "JOBS", "Job", "Outcome", "shared_folder"]

_REPO = Path(__file__).resolve().parents[1]
# What the root conftest sets for every test, set for the jobs too (they start before it).
_TEST_ENV = {"HABITAT_LADDER_WARMUP": "false", "HABITAT_LADDER_FETCH_CHECKERS": "false"}


def shared_folder(basetemp: Path) -> Path:
    """A folder every worker of the session sees: under xdist each worker has its own
    basetemp, and their parent is shared by the run."""
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


@dataclass(frozen=True)
class Outcome:
    returncode: int
    output: str


@dataclass(frozen=True)
class Job:
    """A command run once a session in `folder` (`{folder}` in `argv` names it);
    `test_file` and `fixture` say which selected tests need it."""

    name: str
    argv: tuple[str, ...]
    timeout: float
    test_file: str
    fixture: str

    def folder(self, basetemp: Path) -> Path:
        return shared_folder(basetemp) / f"job-{self.name}"

    def wanted(self, items: list[pytest.Item]) -> bool:
        return any(
            item.path.name == self.test_file and self.fixture in getattr(item, "fixturenames", ())
            for item in items
        )

    def start(self, folder: Path) -> subprocess.Popen[bytes] | None:
        """Spawn the runner unless another process of this session already did; the
        caller owns what it gets (to wait for it, or kill it if the session stops early)."""
        folder.mkdir(parents=True, exist_ok=True)
        try:
            os.close(os.open(folder / "started", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return None
        with open(folder / "lock", "w", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # the child inherits it: released when it ends
            return subprocess.Popen(
                [sys.executable, __file__, str(folder), str(self.timeout), *self._argv(folder)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(lock.fileno(),),
            )

    def wait(self, folder: Path) -> Outcome:
        """The command's outcome, once it ended (run here if no runner ran or it was killed)."""
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "lock", "w", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (folder / "returncode").exists():
                _run_recorded(folder, self.timeout, self._argv(folder))
        return Outcome(
            int((folder / "returncode").read_text(encoding="utf-8")),
            (folder / "output").read_text(encoding="utf-8", errors="replace"),
        )

    def _argv(self, folder: Path) -> list[str]:
        return [arg.replace("{folder}", str(folder)) for arg in self.argv]


CONFORMANCE = Job(
    name="conformance",
    argv=(
        sys.executable,
        str(_REPO / "bench" / "conformance.py"),
        "--with-2026",
        "--json",
        "{folder}/results.json",
    ),
    timeout=1500,
    test_file="test_conformance.py",
    fixture="results",
)
JOBS = (CONFORMANCE,)


def _run_recorded(folder: Path, timeout: float, argv: list[str]) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        code, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        code, output = -1, f"{argv} did not end within {timeout} s: {exc}"
    (folder / "output").write_text(output, encoding="utf-8")
    (folder / "returncode").write_text(str(code), encoding="utf-8")


if __name__ == "__main__":
    _run_recorded(Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3:])
