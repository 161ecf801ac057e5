"""Python, the first toolchain: ruff, mypy / pyright / dmypy and pytest, as `rungs/` runs
them."""

from __future__ import annotations

from pathlib import Path

from ..config import load_ladder_config
from ..layout import discover_layout, is_manifest
from .base import LazyRunners, Toolchain

__all__ = ["PYTHON", "owns"]

# Files pytest and the checkers read as configuration, besides the dependency manifests.
_CONFIG_FILES = frozenset(
    {"conftest.py", "pytest.ini", "tox.ini", "mypy.ini", ".mypy.ini", "ruff.toml", ".ruff.toml"}
)


def detect(root: Path) -> bool:
    """The layout says Python: packages, `setup.py` / `setup.cfg`, a `[project]` or poetry
    `pyproject.toml`, or test files pytest would collect."""
    return discover_layout(root, load_ladder_config(root)).is_python


def owns(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return rel.endswith((".py", ".pyi")) or is_manifest(rel) or name in _CONFIG_FILES


PYTHON = Toolchain(
    name="python",
    detect=detect,
    owns=owns,
    runners=LazyRunners("agent_habitat.verify.rungs", "RUNNERS"),
)
"""Python's caches (`__pycache__`, `.mypy_cache` …) are ignored for every project, in
`snapshot.py` and `watch.py`, so its own `ignores` stay empty."""
