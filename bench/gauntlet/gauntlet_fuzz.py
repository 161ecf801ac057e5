"""Fuzzed tool calls (seeded) over the in-memory MCP client, and malformed raw JSON-RPC
lines over a real stdio server: every request with an id answered, none an internal error.

The values are those of `tests/hardening/test_fuzz_tools.py` (overflowing integers, NUL
bytes, huge strings, catastrophic regexes, wrong types), drawn from a seeded `random` so a
run is repeatable; processes are a `FakeSpawner`'s (a fuzzed command never reaches a shell).
The raw lines are `gauntlet_lines.BAD_LINES`, which the hardening suite shares.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import anyio
from gauntlet_wire import Unanswered, Wire
from mcp import Client
from mcp.shared.exceptions import MCPError

from agent_habitat.clock import SYSTEM_CLOCK
from agent_habitat.mcp_tools import primary_server
from agent_habitat.testing import FakeSpawner, Script, open_fake_habitat

SKIPPED = {"file_write", "file_edit"}
ANSWER_WITHIN_SECONDS = 30
_SPECIAL: list[Any] = [
    "",
    "main",
    "a\0b",
    "x" * 200_000,
    "(a|aa)+$",
    "[",
    "TERM",
    "9",
    "/",
    2**63,
    -(2**63) - 1,
    10**30,
    0,
    -1,
    1,
    True,
    False,
    None,
    1.5,
    float("inf"),
]


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if roll < 0.45 or depth > 1:
        return rng.choice(_SPECIAL)
    if roll < 0.7:
        return "".join(chr(rng.randrange(1, 0x2FFF)) for _ in range(rng.randrange(0, 12)))
    if roll < 0.85:
        return rng.randrange(-(2**70), 2**70)
    if roll < 0.93:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(0, 3))]
    return {str(_value(rng, depth + 1))[:20]: _value(rng, depth + 1) for _ in range(2)}


def _arguments(rng: random.Random, schema: dict[str, Any]) -> dict[str, Any]:
    names = list((schema.get("properties") or {}).keys())
    arguments: dict[str, Any] = {}
    for _ in range(rng.randrange(0, len(names) + 2)):
        key = rng.choice(names) if names and rng.random() < 0.85 else str(_value(rng))[:30]
        arguments[key] = _value(rng)
    return arguments


async def fuzz_tools(project: Path, rng: random.Random, calls: int) -> dict[str, Any]:
    unanswered = internal = 0
    fake = FakeSpawner(default=Script(output="fuzz\n"))
    async with open_fake_habitat(project, spawner=fake, clock=SYSTEM_CLOCK) as habitat:
        async with primary_server(habitat) as primary, Client(primary.server) as client:
            tools = [t for t in (await client.list_tools()).tools if t.name not in SKIPPED]
            for _ in range(calls):
                tool = rng.choice(tools)
                arguments = _arguments(rng, tool.input_schema)
                try:
                    with anyio.fail_after(ANSWER_WITHIN_SECONDS):
                        result = await client.call_tool(tool.name, arguments)
                    answer = json.dumps(result.model_dump(mode="json"), default=str)
                except MCPError as exc:
                    answer = exc.error.message
                except TimeoutError:
                    unanswered += 1
                    continue
                if "internal error" in answer.lower():
                    internal += 1
    return {"fuzzed calls": calls, "unanswered": unanswered, "internal errors": internal}


async def bad_lines(wire: Wire) -> tuple[int, int]:
    """Send every malformed line of the hardening suite to a real server: (sent, unanswered)."""
    from gauntlet_lines import BAD_LINES

    sent = unanswered = 0
    for line, request_id, _code in BAD_LINES:
        if request_id is None:
            continue  # answered with id null: nothing to tell it from another's answer
        sent += 1
        await wire.send(line)
        try:
            with anyio.fail_after(ANSWER_WITHIN_SECONDS):
                await wire.answer(request_id)
        except TimeoutError:
            unanswered += 1
    try:
        await wire.request("ping", {}, within=ANSWER_WITHIN_SECONDS)
    except Unanswered:
        unanswered += 1
    return sent, unanswered


def environment(home: Path) -> dict[str, str]:
    return {**os.environ, "HABITAT_HOME": str(home)}
