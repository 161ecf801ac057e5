"""Reading an MCP tool result in tests: its text block, and its structured content.

Imported as `tool_results`: the root conftest puts `tests/` on the path.
"""

from __future__ import annotations

from typing import Any

from mcp import types

__all__ = ["data", "text"]


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def data(result: types.CallToolResult) -> dict[str, Any]:
    """The structured content of a result that is not an error (its text says why if it is)."""
    assert not result.is_error, text(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content
