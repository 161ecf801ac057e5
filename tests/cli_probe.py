"""A `habitat` command in a fresh interpreter, and which heavy modules it loaded: how the
tests of the CLI's quick paths (a reader of `state.db`, no habitat built) tell which path
answered, and compare it with the full path's answer (the quick reader stood down)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["HEAVY", "Probed", "probe"]

HEAVY = ("pydantic", "anyio", "agent_habitat.habitat")
_PROBE = (
    "import sys\nfrom agent_habitat.cli import main\ncode = main(sys.argv[1:])\n"
    f"heavy = {HEAVY!r}\n"
    "print('\\nloaded:', *[n for n in heavy if n in sys.modules], file=sys.stderr)\n"
    "sys.exit(code)"
)


class Probed:
    """What a probed command did: its exit code, stdout, stderr (the probe's own line left
    out) and the heavy modules it loaded (`HEAVY`, space-separated; empty for none)."""

    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        err, _, loaded = done.stderr.rpartition("\nloaded:")
        self.code, self.stdout, self.stderr = done.returncode, done.stdout, err
        self.loaded = loaded.strip()

    def answer(self) -> tuple[int, str, str]:
        return self.code, self.stdout, self.stderr


def probe(root: Path, *argv: str, stand_down: str = "", **env: str) -> Probed:
    """`habitat ARGV` in `root`; `stand_down`: code run first (e.g. a quick reader replaced
    by `lambda *a: None`, so the full path answers)."""
    done = subprocess.run(
        [sys.executable, "-c", stand_down + _PROBE, *argv],
        capture_output=True,
        text=True,
        # A bound for a hung process, not a speed claim (the full path builds the habitat).
        timeout=180,
        check=False,
        env={**os.environ, **env},
        cwd=root,
    )
    return Probed(done)
