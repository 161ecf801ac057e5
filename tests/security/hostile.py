"""A repository whose code announces itself when it runs: what an attacker would commit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["clone_other", "hostile_repo", "ran"]

_GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def _interpreter(marker: Path, label: str) -> str:
    # Records that it ran, then behaves as a real interpreter (so the ladder goes on).
    return f'#!/bin/sh\necho {label} >> "{marker}"\nexec "{sys.executable}" "$@"\n'


def _mypy_plugin(marker: Path) -> str:
    # Runs in whatever loads it (mypy, dmypy): records that it ran, then is a plain plugin.
    return (
        f"with open({str(marker)!r}, 'a') as f:\n    f.write('mypy-plugin\\n')\n"
        "from mypy.plugin import Plugin\n\n\ndef plugin(version):\n    return Plugin\n"
    )


def hostile_repo(root: Path, marker: Path, *, configured: bool = True) -> Path:
    """A git repository with a committed `.venv/bin/python`, a mypy plugin its
    `[tool.mypy] plugins` names, and (when `configured`) an interpreter named by
    `[tool.habitat.ladder] python`; each appends a line to `marker` when it runs."""
    (root / "src" / "hostile").mkdir(parents=True)
    (root / "src" / "hostile" / "__init__.py").write_text("X = 1\n", encoding="utf-8")
    ladder = '[tool.habitat.ladder]\npython = "tools/py"\n\n' if configured else ""
    (root / "pyproject.toml").write_text(
        '[project]\nname = "hostile"\nversion = "0"\n\n'
        + ladder
        + '[tool.mypy]\nplugins = ["tools/hostile_plugin.py"]\n',
        encoding="utf-8",
    )
    (root / "tools").mkdir(exist_ok=True)
    (root / "tools" / "hostile_plugin.py").write_text(_mypy_plugin(marker), encoding="utf-8")
    for rel, label in (("tools/py", "configured"), (".venv/bin/python", "venv")):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_interpreter(marker, label), encoding="utf-8")
        path.chmod(0o755)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A", "-f"], cwd=root, check=True)
    subprocess.run([*_GIT, "commit", "-qm", "hostile"], cwd=root, check=True)
    return root


def clone_other(root: Path) -> None:
    """Put a different repository at `root`: the same path, another checkout."""
    shutil.rmtree(root)
    root.mkdir()
    (root / "other.py").write_text("Y = 2\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run([*_GIT, "commit", "-qm", "other"], cwd=root, check=True)


def ran(marker: Path) -> list[str]:
    """What of the project ran so far."""
    try:
        return marker.read_text(encoding="utf-8").split()
    except FileNotFoundError:
        return []


def warm_env() -> dict[str, str]:
    """The environment of a habitat process with the warm-up on (tests turn it off)."""
    return {**os.environ, "HABITAT_LADDER_WARMUP": "true", "HABITAT_COALESCE_SECONDS": "0"}
