"""A workspace's mypy caches seeded from a climb made once for the test run.

A red `compile.project` runs plain mypy beside the daemon (the run that confirms the
daemon's red, and HEAD's run in its export), and a one-shot verify (`habitat verify`
without a host) runs plain mypy instead of the daemon, each over an incremental cache in
the workspace's state (`mypy-cache`, `baseline/mypy-cache`). Every test gets a fresh
`HABITAT_HOME`, so each of those runs was cold: about 1.5 s of CPU on the standard
library, the same in every test, where a warm cache takes 0.2 s. `seed_mypy` copies the
caches that a real climb left on a copy of the project (one per `pyproject.toml`: the
options a cache entry is valid for come from there) into the state of the project the
test climbs. mypy checks every entry it reads against the file and the options it was
made from, and checks again whatever differs (the project's own modules, which live in
another folder here), so what a run says is what a cold run says. The daemon never reads
these caches: a daemon's start stays cold.

Imported as `mypy_seed`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_habitat.workspace import Workspace

__all__ = ["seed_mypy"]

_CACHES = ("mypy-cache", "baseline/mypy-cache")
_SEEDS: dict[str, Path] = {}

# A type error added to one of the project's modules, climbed one-shot (plain mypy, no
# daemon): red, so HEAD's run in its export writes its cache too.
_CLIMB = """
import sys
from pathlib import Path

import anyio

from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, run_ladder
from agent_habitat.workspace import Workspace

root, module = Path(sys.argv[1]), Path(sys.argv[1], sys.argv[2])
module.write_text(module.read_text(encoding="utf-8") + "\\nSEEDED: int = 'no'\\n")


async def climb():
    request = LadderRequest(rungs=["compile.project"])
    environ = {"HABITAT_LADDER_DMYPY": "false"}
    return await run_ladder(root, request, bus=InMemoryEventBus("seed"), environ=environ)


(rung,) = anyio.run(climb).rungs
assert rung.state == "red", rung
print(Workspace.for_project(root).state_dir)
"""


def seed_mypy(root: Path, factory: pytest.TempPathFactory) -> None:
    """Put seeded mypy caches into the state of the committed project at `root` (the
    workspace the current `HABITAT_HOME` gives it), made as the product makes it."""
    seed = _made(root, factory)
    state = Workspace.for_project(root).ensure().state_dir
    for rel in _CACHES:
        shutil.copytree(seed / rel, state / rel, symlinks=True)


def _made(root: Path, factory: pytest.TempPathFactory) -> Path:
    """The seed's state folder for `root`'s configuration: made once for the run, by the
    first xdist worker that asks (the others wait on its lock, then read it)."""
    key = hashlib.sha256((root / "pyproject.toml").read_bytes()).hexdigest()[:16]
    if key in _SEEDS:
        return _SEEDS[key]
    base = factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        base = base.parent  # the run's folder, which holds every worker's
    folder = base / "mypy-seed" / key
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = folder / "state"
        if not made.exists():
            state = _climb(root, folder)
            for rel in _CACHES:
                assert (state / rel).is_dir(), f"the climb left no {rel} in {state}"
            made.write_text(str(state), encoding="utf-8")
        _SEEDS[key] = Path(made.read_text(encoding="utf-8"))
    return _SEEDS[key]


def _climb(root: Path, folder: Path) -> Path:
    """The state folder a red one-shot climb on a copy of `root` left."""
    copy = folder / "project"
    shutil.rmtree(copy, ignore_errors=True)  # an earlier attempt's
    shutil.copytree(root, copy, symlinks=True)
    listed = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=copy, capture_output=True, text=True, check=True
    )
    module = next(p for p in listed.stdout.split() if not p.startswith("tests/"))
    home = folder / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    env = {
        **os.environ,
        "HABITAT_HOME": str(home),
        "HABITAT_LADDER_WARMUP": "false",
        "HABITAT_LADDER_FETCH_CHECKERS": "false",
    }
    done = subprocess.run(
        [sys.executable, "-c", _CLIMB, str(copy), module],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,  # a bound for a hung process: two cold mypy runs
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return Path(done.stdout.strip().splitlines()[-1])
