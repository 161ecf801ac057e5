"""The comment-only edit of the ladder harness, timed through the host as a user would."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ladder_harness_projects import reset

if TYPE_CHECKING:
    from ladder_harness import Runner

__all__ = ["comment_edits"]


def comment_edits(run: Runner, file: str, samples: int) -> list[float]:
    """The wall of `habitat verify` (through the host) after a comment-only edit: a new
    comment line at the top of `file`, different each time, on the clean tree."""
    out: list[float] = []
    for i in range(samples):
        reset(run.root)
        path = run.root / file
        path.write_text(f"# bench: comment edit {i}\n" + path.read_text(encoding="utf-8"))
        wall, result = run.verify("--policy", "standard")
        out.append(wall)
        print(
            f"[{run.project.name}] comment edit {i + 1}/{samples}: {wall:.2f}s "
            f"{result.get('state', 'error')}",
            file=sys.stderr,
            flush=True,
        )
    reset(run.root)
    return out
