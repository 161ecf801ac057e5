"""Selection timed in-process: what `analyse_impact` costs for the current change, with the
same workspace state (grimp cache, recorded test dependencies) the CLI uses."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agent_habitat.verify.config import load_ladder_config
from agent_habitat.verify.layout import discover_layout
from agent_habitat.verify.select.selection import analyse_impact
from agent_habitat.verify.snapshot import take_snapshot
from agent_habitat.workspace import Workspace

__all__ = ["selection_time_ms"]


def selection_time_ms(root: Path, home: Path) -> float:
    """Milliseconds for layout discovery + impact analysis (the snapshot is taken first and
    not counted: the ladder takes it for every rung anyway)."""
    os.environ["HABITAT_HOME"] = str(home)
    workspace = Workspace.for_project(root)
    config = load_ladder_config(root)
    snap = take_snapshot(root)
    t0 = time.perf_counter()
    layout = discover_layout(root, config)
    analyse_impact(
        layout, snap.touched, snap.deleted, config, workspace.state_dir / "grimp", head=snap.head
    )
    return round((time.perf_counter() - t0) * 1000, 1)
