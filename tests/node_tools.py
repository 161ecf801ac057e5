"""Real Node tools (typescript, eslint, vitest, jest, biome) for the Node toolchain's
tests: installed once with npm into a cache folder outside the checkout, and linked into
each tiny project a test makes as its `node_modules`.

Imported as `node_tools`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["PACKAGES", "install", "node_modules", "start_install"]

PACKAGES = {
    "typescript": "5.8.3",
    "eslint": "9.39.5",
    "vitest": "3.2.7",
    "jest": "30.5.2",
    "@biomejs/biome": "2.1.3",
}
_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agent-habitat-tests"


def _folder() -> Path:
    tag = "-".join(f"{k.replace('/', '+')}@{v}" for k, v in sorted(PACKAGES.items()))
    return _CACHE / f"node-tools-{hashlib.sha256(tag.encode()).hexdigest()[:12]}"


def node_modules() -> Path:
    """The cached `node_modules` with the tools, installed on first use (a few minutes on a
    slow registry; later runs reuse it, and the root conftest begins it with the session).
    Skips, saying why, where node or npm is absent."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("node and npm are not installed here (the Node toolchain's tools need them)")
    failed = install(npm)
    if failed is not None:
        pytest.fail(f"npm install of the test tools failed: {failed}")
    return _folder() / "node_modules"


def install(npm: str) -> str | None:
    """Install the tools unless done (one installer across xdist workers and the session's
    background start); what npm said when it failed, else None."""
    folder = _folder()
    done = folder / "node_modules" / ".installed"
    if done.is_file():
        return None
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_file():
            return None
        (folder / "package.json").write_text(
            json.dumps({"name": "habitat-test-tools", "private": True}), encoding="utf-8"
        )
        specs = [f"{k}@{v}" for k, v in PACKAGES.items()]
        proc = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", *specs],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=1200,
            check=False,
        )
        if proc.returncode != 0:
            return proc.stderr[-2000:]
        done.write_text("ok", encoding="utf-8")
    return None


def start_install(items: list[pytest.Item]) -> subprocess.Popen[bytes] | None:
    """Begin the install in the background when the session selected a Node toolchain test
    and it is not done yet: the tests that need it wait on the lock, the others run meanwhile."""
    npm = shutil.which("npm")
    if (
        npm is None
        or shutil.which("node") is None
        or (_folder() / "node_modules" / ".installed").is_file()
    ):
        return None
    if not any(item.path.name == "test_node_rungs.py" for item in items):
        return None
    return subprocess.Popen(
        [sys.executable, __file__, npm],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


if __name__ == "__main__":
    sys.exit(0 if install(sys.argv[1]) is None else 1)
