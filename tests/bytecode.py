"""The checkout's bytecode, written for a run even where PYTHONDONTWRITEBYTECODE is set.

With that variable set (agent sandboxes and CI images set it) every interpreter compiles
what it imports from source, each time: each xdist worker rewrote and compiled every test
module at collection, and each of the habitat processes the suite starts (CLI calls,
hosts, MCP servers) compiled the package again. The variable stays as it was for
everything the tests do: the package is compiled once before the workers start, and a
worker writes the bytecode of what it imports while it collects, then stops writing.
"""

from __future__ import annotations

import compileall
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["compile_package", "written"]


def compile_package() -> None:
    """The package's modules compiled into their `__pycache__`, where they are not already
    (what pip does for an installed wheel); a checkout that cannot be written is left as is."""
    spec = importlib.util.find_spec("agent_habitat")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(folder, quiet=2)


@contextmanager
def written() -> Iterator[None]:
    """Imports inside write their bytecode (pytest's rewritten test modules included)."""
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        yield
    finally:
        sys.dont_write_bytecode = before
