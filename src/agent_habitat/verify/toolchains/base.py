"""What a toolchain is: how to tell a project has it, which touched files are its, the rungs
it runs and the folders it fills with its own output (never part of a change)."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from ..models import RungName, RungResult

if TYPE_CHECKING:
    from ..rungs.context import RungContext

__all__ = ["LazyRunners", "Rung", "Toolchain"]

Rung: TypeAlias = "Callable[[RungContext], Awaitable[RungResult]]"
"""One rung of one toolchain: `ctx.toolchain` names it, `ctx.touched` holds its files."""


class LazyRunners(Mapping[RungName, Rung]):
    """A toolchain's rung table, imported on first use: the registry stays cheap for the
    shell verbs and the snapshot, which never climb (the rungs pull in grimp and more)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    @cached_property
    def _table(self) -> Mapping[RungName, Rung]:
        table: Mapping[RungName, Rung] = getattr(importlib.import_module(self.module), self.name)
        return table

    def __getitem__(self, rung: RungName) -> Rung:
        return self._table[rung]

    def __iter__(self) -> Iterator[RungName]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


@dataclass(frozen=True)
class Toolchain:
    name: str
    """`python`, `go`, `rust`, `node`: prefixes its notes when several climb."""
    detect: Callable[[Path], bool]
    """The project root has this toolchain's files (blocking; called from a worker thread)."""
    owns: Callable[[str], bool]
    """A touched project-relative posix path belongs to it (`*.go`, `go.mod` …)."""
    runners: Mapping[RungName, Rung]
    """The rungs it implements; a rung it lacks is skipped, saying so."""
    ignores: tuple[str, ...] = ()
    """Folder names the watcher and the snapshot never count as a change (`node_modules`,
    `target`)."""
