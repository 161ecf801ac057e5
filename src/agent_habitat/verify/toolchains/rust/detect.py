"""Which projects are Rust projects and which touched files are Rust's."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from ...output_dirs import RUST_OUTPUT

__all__ = ["IGNORES", "detect", "owns"]

IGNORES = RUST_OUTPUT
"""cargo's build output: never part of a change."""

# Files whose content cargo reads besides the sources.
_MANIFESTS = frozenset({"Cargo.toml", "Cargo.lock", "build.rs", "clippy.toml", ".clippy.toml"})


def detect(root: Path) -> bool:
    """A Cargo project: a `Cargo.toml` at the project's root (a package or a workspace)."""
    return (root / "Cargo.toml").is_file()


def owns(rel: str) -> bool:
    """A touched path cargo builds from: `*.rs`, the manifests and lock file, `build.rs`,
    clippy's settings, `.cargo/config.toml`."""
    path = PurePosixPath(rel)
    if path.suffix == ".rs" or path.name in _MANIFESTS:
        return True
    return path.parent.name == ".cargo" and path.name in ("config", "config.toml")
