"""Package attributes that load their module on first use (PEP 562), and modules that load
at the first read of one of their attributes.

A package whose `__init__` re-exports heavy modules (the ladder, the host) lets a caller
that needs one light name (a model, `find_host`) skip importing the rest. A module that
calls a heavy library in a few functions only (psutil in `proc/`) holds `lazy_module`'s
stand-in: a process that never calls them (`habitat run` with no host) never imports it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy takes any `TYPE_CHECKING` as true; `typing` is not imported
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_attributes", "lazy_module"]


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


class _LazyModule:
    """Module `name`, imported when an attribute of it is first read."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        from importlib import import_module

        return getattr(import_module(self._name), attribute)


def lazy_module(name: str) -> Any:
    """A stand-in for the module `name` (declare the real one under `TYPE_CHECKING` for
    mypy): it is imported at the first attribute read, an `except name.Error` clause
    included, which Python evaluates only when an exception reaches it."""
    return _LazyModule(name)
