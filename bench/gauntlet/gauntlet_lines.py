"""Malformed JSON-RPC lines a stdio MCP server must answer, not drop: the hardening suite's
(tests/hardening/test_stdio_answers.py) and the gauntlet's fuzz share them from here."""

from __future__ import annotations

from typing import Any

__all__ = ["BAD_LINES"]

# (raw line, the id the answer must carry, the JSON-RPC error code)
BAD_LINES: list[tuple[str, Any, int]] = [
    ('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\\ud800"}}', 1, -32600),
    ('{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"\\udfff"}}', "s", -32600),
    ('{"jsonrpc":"1.0","id":2,"method":"ping"}', 2, -32600),
    ('{"jsonrpc":"2.0","id":3,"method":"ping","params":[1]}', 3, -32600),
    ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', 1.5, -32600),
    ('{"jsonrpc":"2.0","id":true,"method":"ping"}', True, -32600),
    ('{"jsonrpc":"2.0","id":4}', 4, -32600),
    ('{"jsonrpc":"2.0","id":5,"method":7}', 5, -32600),
    ('[{"jsonrpc":"2.0","id":6,"method":"ping"}]', None, -32600),
    ("{not json", None, -32700),
]
