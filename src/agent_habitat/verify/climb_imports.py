"""The climb's own modules imported ahead of a host's first verify, in a quiet moment.

A host starts without the ladder (its start stays light: host/server.py), so its first
verify imported the climb on the event loop before any tool ran: the ladder, the rungs,
selection, the toolchain's rung table and the report models, about 0.75 s of a Rust first
verify at load 11 (scopeguard, traced: the request at 0.26 s, `cargo metadata` at 1.08 s)
against the user's whole `cargo test` of 0.35 s. Importing the habitat's own code runs
nothing of the project's: which toolchains' tables load is told by the files at the root
(`Toolchain.detect`), as the snapshot's ignores already are; the verdict's models are built
too (`_build_models`)."""

from __future__ import annotations

import importlib
from pathlib import Path

from pydantic import BaseModel

__all__ = ["CLIMB_MODULES", "import_climb"]

CLIMB_MODULES = (
    "agent_habitat.verify.ladder",
    "agent_habitat.verify.runner.report",
    "agent_habitat.verify.runner.args",
)
"""What every climb imports (runner.py loads the ladder at the first request), and the
verdict's report and the verify call's arguments."""

_BUILT_HERE = ("agent_habitat.verify", "agent_habitat.trust")
"""The packages whose models a first verify builds: the request, the climb's results, the
report, and the trust its first verify grants."""


def _build_models() -> None:
    """Every model of `_BUILT_HERE` imported and not built yet, built. They are built on
    first use (`defer_build`: a shell command never pays for them), and a first verdict
    built about twenty of them on its way (traced: pydantic's schema building on the event
    loop as the climb began and as the verdict went out; 0.19 s for 22 of them at load
    49)."""
    seen: set[type[BaseModel]] = set()
    todo = list(BaseModel.__subclasses__())
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        todo.extend(model.__subclasses__())
        if model.__module__.startswith(_BUILT_HERE) and not model.__pydantic_complete__:
            model.model_rebuild()


def import_climb(root: Path) -> list[str]:
    """Blocking: import the climb and the rung tables of the toolchains the project at
    `root` has; the toolchains' names."""
    for name in CLIMB_MODULES:
        importlib.import_module(name)
    _build_models()
    from .toolchains import detected

    chains = detected(root)
    for chain in chains:
        len(chain.runners)  # a LazyRunners table imports its module on first use
    return [chain.name for chain in chains]
