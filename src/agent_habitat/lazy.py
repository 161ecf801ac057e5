"""Package attributes that load their module on first use (PEP 562).

A package whose `__init__` re-exports heavy modules (the ladder, the host) lets a caller
that needs one light name (a model, `find_host`) skip importing the rest.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, home: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: `name` comes from `package.<home[name]>`."""

    def getattr_(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        from importlib import import_module  # here: `agent_habitat.reach` is on every CLI call

        value = getattr(import_module(f".{module}", package), name)
        import sys

        setattr(sys.modules[package], name, value)
        return value

    return getattr_
