"""The ladder part of `habitat demo` runs through and cleans up its daemon."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from agent_habitat.cli.demo_tour import ladder_tour
from agent_habitat.verify.rungs import DmypyDaemon
from agent_habitat.workspace import Workspace

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_the_ladder_tour_shows_red_then_green_and_stops_its_daemon(tmp_path: Path) -> None:
    out = io.StringIO()
    await ladder_tour(Console(file=out, width=120), tmp_path)
    text = out.getvalue()
    assert text.count("ladder GREEN") == 2
    assert "ladder RED" in text
    assert "compile.project is red; the climb stopped there" in text
    assert 'Incompatible return value type (got "str", expected "int")' in text
    # What it shows a person to type is the command as documented (no hidden flag).
    assert "$ habitat verify  #" in text
    assert "--wait" not in text
    daemon = DmypyDaemon(Workspace.for_project(tmp_path / "calc"))
    assert daemon.state() == "absent"
