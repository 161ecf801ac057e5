"""The habitat's own bytecode, compiled before a bench times its CLI, as installing a wheel
does (pip compiles at install; an ordinary environment writes `__pycache__` on first
import). This machine's environment sets PYTHONDONTWRITEBYTECODE, so a habitat run from a
worktree (an editable install) would otherwise compile its modules at every CLI start:
about 0.15 s of CPU for `habitat verify --no-host`, ~0.1 s of wall per hosted CLI call at
load 25-30 (docs/benchmarks.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["compile_habitat"]


def compile_habitat(habitat: Path) -> str:
    """Byte-compile the agent_habitat package the CLI at `habitat` imports; its folder."""
    python = habitat.parent / "python"
    where = subprocess.run(
        [str(python), "-c", "import agent_habitat; print(agent_habitat.__path__[0])"],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    ).stdout.strip()
    subprocess.run([str(python), "-m", "compileall", "-q", where], check=True)
    return where
