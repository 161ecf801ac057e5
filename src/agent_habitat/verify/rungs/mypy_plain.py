"""The plain mypy command of `compile.project` (no daemon): its targets, flags, cache and the
standard library's shared cache, built from the project's settings alone, so that the rung
and a one-shot verify's early start (mypy_early.py) build the very same command."""

from __future__ import annotations

from pathlib import Path

from ...workspace import private_dirs
from ..config import LadderConfig
from ..environments import ProjectEnv
from ..layout import Layout
from . import mypy_stdlib
from .checkers import DEFAULT_MYPY_FLAGS, version_flags
from .dmypy import MYPY_FLAGS

__all__ = [
    "cache_dir",
    "flags_for",
    "package_targets",
    "plain_argv",
    "prefer_stubs",
    "shared_stdlib",
]


def prefer_stubs(root: Path, targets: list[str]) -> list[str]:
    # A module with a stub next to it is typed by the stub: checking the `.py` by name would
    # judge code the project never type-checks (mypy and pyright both let the stub win).
    out: list[str] = []
    for rel in targets:
        stub = rel[:-3] + ".pyi" if rel.endswith(".py") else rel
        out.append(stub if (root / stub).is_file() else rel)
    return sorted(set(out))


def package_targets(root: Path, layout: Layout) -> list[str]:
    """Every module of the project's packages and its top-level modules (stubs preferred):
    what the dmypy daemon is always asked to check, by the warm-up and by every rung, so its
    file list never changes between checks (a changed list costs the daemon a re-read, ~0.6 s
    on packaging); and what a one-shot verify's early mypy checks."""
    files = [
        layout.rel(p)
        for pkg in layout.packages.values()
        for p in pkg.rglob("*.py")
        if "__pycache__" not in p.parts
    ]
    files += (layout.rel(p) for p in layout.modules.values())
    return prefer_stubs(root, files)


def flags_for(root: Path, config: LadderConfig, env: ProjectEnv, configured: bool) -> list[str]:
    """The flags every mypy run of the rung gets (the warm-up's daemon start too: the
    daemon restarts when they differ)."""
    # The error code is known to the habitat's mypy (a pinned dependency); a project's own
    # older mypy might reject it, and runs with its plain defaults.
    quiet = not (configured or config.lint == "strict" or env.has("mypy"))
    return [*version_flags(root, env), *(DEFAULT_MYPY_FLAGS if quiet else ())]


def cache_dir(state_dir: Path) -> Path:
    # Its incremental cache lives in the workspace state, never in the project's tree; the
    # plain run of a one-shot verify and the run that confirms a daemon's red share it.
    # Made here, 0700 like every state folder: mypy would make it with the umask's 0755.
    return private_dirs(state_dir / "mypy-cache")


def plain_argv(state_dir: Path, env: ProjectEnv, flags: list[str], targets: list[str]) -> list[str]:
    prefix, extra = env.mypy()
    cache = ["--cache-dir", str(cache_dir(state_dir))]
    return [*prefix, *MYPY_FLAGS, *extra, *flags, *cache, *targets]


def shared_stdlib(env: ProjectEnv, flags: list[str], configured: bool) -> Path | None:
    """The standard library's shared cache this check may start from and add to: the
    habitat's own mypy on a project that configures none (mypy_stdlib.py)."""
    if configured or env.has("mypy"):
        return None
    return mypy_stdlib.shared_dir([*MYPY_FLAGS, *flags])
