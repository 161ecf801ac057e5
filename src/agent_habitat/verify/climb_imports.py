"""The climb's own modules imported ahead of a host's first verify, in a quiet moment.

A host starts without the ladder (its start stays light: host/server.py), so its first
verify imported the climb on the event loop before any tool ran: the ladder, the rungs,
selection, the toolchain's rung table and the report models, about 0.75 s of a Rust first
verify at load 11 (scopeguard, traced: the request at 0.26 s, `cargo metadata` at 1.08 s)
against the user's whole `cargo test` of 0.35 s. Importing the habitat's own code runs
nothing of the project's: which toolchains' tables load is told by the files at the root
(`Toolchain.detect`), as the snapshot's ignores already are; the report's models are built
too (a verdict builds them; 65 ms at load 35)."""

from __future__ import annotations

import importlib
from pathlib import Path

__all__ = ["CLIMB_MODULES", "import_climb"]

CLIMB_MODULES = ("agent_habitat.verify.ladder",)
"""What every climb imports (runner.py loads it at the first request)."""


def import_climb(root: Path) -> list[str]:
    """Blocking: import the climb and the rung tables of the toolchains the project at
    `root` has; the toolchains' names."""
    for name in CLIMB_MODULES:
        importlib.import_module(name)
    from .models import Diagnostic, LadderRequest, LadderResult, RungResult, Selection
    from .timing import Timing

    # The report's models are built on first use (`defer_build`: a shell command never
    # builds them); a verdict builds them all.
    for model in (Diagnostic, Selection, RungResult, LadderRequest, LadderResult, Timing):
        model.model_rebuild()
    from .toolchains import detected

    chains = detected(root)
    for chain in chains:
        len(chain.runners)  # a LazyRunners table imports its module on first use
    return [chain.name for chain in chains]
