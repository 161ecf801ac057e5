"""The demo's shell tour: each step as the command a person types, and its MCP call."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from agent_habitat.cli.demo_tour import shell_tour

pytestmark = pytest.mark.anyio


async def test_the_shell_tour_shows_commands_and_an_mcp_exchange_not_python_lists(
    project: Path,
) -> None:
    out = io.StringIO()
    await shell_tour(Console(file=out, width=200), project)
    text = out.getvalue()
    assert "$ habitat run 'echo hello from $0; uname -sr'" in text
    assert "$ habitat wait server --until 'tick 3'" in text
    assert "$ habitat kill tree" in text
    assert "MCP: shell_run" in text
    assert '→ tools/call {"name": "shell_run"' in text
    assert "← structuredContent" in text
    assert "['" not in text
