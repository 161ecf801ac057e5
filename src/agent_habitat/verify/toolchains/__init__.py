# toolchains/: what a language brings to the ladder. base.py the `Toolchain` a language
#   fills in; python.py the first one; climb.py runs a rung for every detected toolchain
#   with work and merges their results into one. A new toolchain registers with one
#   import and one entry in TOOLCHAINS.
#   go/ the Go toolchain (go list, gofmt, go vet, go build, go test).
#   node/ the TypeScript/JavaScript toolchain's pieces (detection, parsers, rungs).
#   rust/ the Rust toolchain (Cargo.toml, workspaces; clippy, cargo check/build/test).
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..snapshot import Snapshot, take_snapshot
from .base import Rung, Toolchain
from .go import GO
from .node import NODE
from .python import PYTHON
from .rust import RUST

__all__ = [
    "FALLBACK",
    "TOOLCHAINS",
    "Rung",
    "Toolchain",
    "detected",
    "ignored_dirs",
    "snapshot_of",
]

TOOLCHAINS: dict[str, Toolchain] = {
    PYTHON.name: PYTHON,
    RUST.name: RUST,
    NODE.name: NODE,
    GO.name: GO,
}
"""Every toolchain the ladder knows, in climbing order."""

FALLBACK = PYTHON
"""What climbs a project where none is detected: its rungs run the configured commands and
say plainly what is not there (as they did before toolchains were a seam)."""


def detected(root: Path, known: Mapping[str, bool] | None = None) -> list[Toolchain]:
    """The toolchains whose files the project at `root` has (blocking). `known`: answers
    the caller already worked out (the ladder's layout for python), not asked again."""
    known = known or {}
    return [
        chain
        for name, chain in TOOLCHAINS.items()
        if (known[name] if name in known else chain.detect(root))
    ]


def ignored_dirs(root: Path) -> frozenset[str]:
    """The folders the detected toolchains fill with their own output (blocking): the
    watcher and the snapshot leave them out. Only toolchains that ignore something are
    asked to detect."""
    return frozenset(
        name
        for chain in TOOLCHAINS.values()
        if chain.ignores and chain.detect(root)
        for name in chain.ignores
    )


def snapshot_of(root: Path) -> Snapshot:
    """The snapshot of `root` without the detected toolchains' output folders (blocking).
    Every snapshot the runner and the ladder compare goes through here, so their ids agree."""
    return take_snapshot(root, ignored_dirs(root))
