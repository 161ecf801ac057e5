"""Files whose content can change what a type checker or linter reports: the HEAD check's
cache key (`head_check`) and a warm checker's (`warm_checker`), which `habitat status` reads
without importing the ladder."""

from __future__ import annotations

__all__ = ["CONFIG_FILES"]

CONFIG_FILES = (
    "pyproject.toml",
    "setup.cfg",
    "mypy.ini",
    ".mypy.ini",
    "pyrightconfig.json",
    "tox.ini",
)
