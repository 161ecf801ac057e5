"""Stopping a workspace's warm dmypy daemon and warm pytest, without loading the ladder: the
host does it on every stop, and most hosts stop with neither running."""

from __future__ import annotations

from pathlib import Path

import anyio

from ..workspace import Workspace
from .config import load_ladder_config
from .environments import probe_env, resolve_python
from .rungs.dmypy import DmypyDaemon
from .rungs.warm_pytest import WarmPytest

__all__ = ["stop_type_daemon"]


async def stop_type_daemon(root: Path, workspace: Workspace | None = None) -> None:
    """Stop the workspace's warm dmypy daemon and warm pytest (the host calls this on
    shutdown; tests too)."""
    root = Path(await anyio.Path(root).resolve())
    workspace = workspace or Workspace.for_project(root)
    await WarmPytest(workspace).stop_now()
    daemon = DmypyDaemon(workspace)
    if daemon.state() == "absent":
        return
    config = load_ladder_config(root)
    python = resolve_python(root, config.python)
    env = await probe_env(python, workspace.spool_dir / "probe-stop.out")
    await daemon.stop(env, root)
