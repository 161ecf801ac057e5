"""The folders a toolchain's tools fill with their own output, by the file that detects the
toolchain, standard library only: `toolchains.ignored_dirs` without importing the toolchains
(their rung tables bring the models), for a snapshot taken by `habitat status` with no host
(`cli/status_quiet.py`). The toolchains take their `ignores` from here; a test keeps the
markers equal to their `detect`."""

from __future__ import annotations

import os

__all__ = ["BY_MARKER", "NODE_OUTPUT", "RUST_OUTPUT", "output_dirs"]

NODE_OUTPUT = (
    "node_modules",
    "dist",
    "build",
    "coverage",
    ".next",
    ".nuxt",
    ".turbo",
    ".svelte-kit",
    ".output",
)
"""Folder names (at any depth) the Node toolchain's tools fill: never part of a change."""
RUST_OUTPUT = ("target",)
"""cargo's build output: never part of a change."""

BY_MARKER = (("package.json", NODE_OUTPUT), ("Cargo.toml", RUST_OUTPUT))
"""A toolchain is detected by a regular file of this name at the project's root."""


def output_dirs(root: str) -> frozenset[str]:
    """`toolchains.ignored_dirs(root)` (blocking): the output folders of the toolchains the
    project at `root` has."""
    return frozenset(
        name
        for marker, names in BY_MARKER
        if os.path.isfile(os.path.join(root, marker))
        for name in names
    )
