"""A red change undone: the agent edits, verify is red, it reverts the edit (`git checkout`),
verify again. The tree is HEAD's content: nothing to verify (never green: nothing ran), and
the answer says the red change is gone instead of sending it to a full ci_parity run. Over
a real MCP client on stdio (`verify_run`, `verify_status`) and the CLI (`habitat verify`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from agent_habitat.cli import main
from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.reach import ensure_host, find_host, stop_host
from agent_habitat.verify import stop_type_daemon
from mypy_seed import seed_mypy
from tool_results import data, text

pytestmark = pytest.mark.e2e

HABITAT = str(Path(sys.executable).with_name("habitat"))
ARITH = "src/calc/arith.py"
GONE = "'s red change (src/calc/arith.py) is gone; nothing else to verify"


@pytest.fixture
def calc(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = build_sample(tmp_path / "calc")
    seed_mypy(root, tmp_path_factory)
    yield root
    anyio.run(stop_type_daemon, root)


def break_add(root: Path) -> None:
    path = root / ARITH
    path.write_text(path.read_text(encoding="utf-8").replace("a + b", "a - b"), encoding="utf-8")


def revert(root: Path) -> None:
    subprocess.run(["git", "checkout", "--", ARITH], cwd=root, check=True, capture_output=True)


@asynccontextmanager
async def verify_client(root: Path) -> AsyncIterator[Client]:
    env = {**os.environ, "HABITAT_COALESCE_SECONDS": "0"}
    params = StdioServerParameters(
        command=HABITAT, args=["mcp", "--embedded", "--project", str(root)], env=env, cwd=root
    )
    async with Client(params, mode="legacy") as connected:
        yield connected


async def _run(client: Client, **args: Any) -> Any:
    return await client.call_tool("verify_run", {"wait": True, **args})


@pytest.mark.anyio
async def test_verify_after_reverting_a_red_edit_says_the_red_change_is_gone(calc: Path) -> None:
    async with verify_client(calc) as client:
        break_add(calc)
        red = await _run(client)
        revert(calc)
        back = await _run(client)
        status = await client.call_tool("verify_status", {})
        again = await _run(client)  # the epoch before is no red one now: today's answer
    assert data(red)["state"] == "red", text(red)
    result = data(back)
    assert result["state"] == "nothing_to_verify", text(back)
    assert result["green"] is False
    number = data(red)["epoch"]
    assert f"epoch {number}{GONE}" in text(back), text(back)
    assert "ci_parity" not in text(back)
    assert text(back).startswith("state=nothing_to_verify green=false")
    assert f"epoch {number}{GONE}" in text(status), text(status)
    assert data(status)["green"] is False
    assert "ci_parity" in text(again), text(again)
    assert GONE not in text(again)


@pytest.mark.anyio
async def test_a_clean_tree_with_no_red_before_keeps_the_hint(calc: Path) -> None:
    async with verify_client(calc) as client:
        clean = await _run(client)
    assert data(clean)["state"] == "nothing_to_verify", text(clean)
    assert "red change" not in text(clean)
    assert "or use the ci_parity policy for the full suite" in text(clean), text(clean)


def test_the_cli_says_the_red_change_is_gone_after_a_revert(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["verify", "--project", str(calc), "--rung", "test.scoped"]
    break_add(calc)
    assert main(args) == 1
    capsys.readouterr()
    revert(calc)
    assert main(args) == 4  # nothing_to_verify: not green
    out = capsys.readouterr().out
    assert GONE in out, out
    assert "ci_parity" not in out
    assert main([*args, "--json"]) == 4  # the epoch before is no red one now
    assert "ci_parity" in capsys.readouterr().out


def test_the_cli_through_the_host_says_it_too(
    calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = ensure_host(calc).record
    try:
        args = ["verify", "--project", str(calc), "--rung", "test.scoped"]
        break_add(calc)
        assert main(args) == 1
        capsys.readouterr()
        revert(calc)
        assert main(args) == 4
        out = capsys.readouterr().out
        assert find_host(calc) == record  # the host climbed both
    finally:
        stop_host(calc)
    assert GONE in out, out
    assert "ci_parity" not in out
