"""diagnose.files' syntax check does not parse a file whose edit is whole-line comments and
blank lines on a HEAD that parsed (told from the lines, as compile.project tells it); any
other edit is parsed, and a syntax error is red as before. Real ruff, real git."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agent_habitat.verify.rungs.diagnose as diagnose
from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, RungResult, run_ladder
from agent_habitat.verify.python_ast import parse

pytestmark = pytest.mark.anyio

ARITH = "src/calc/arith.py"


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    return build_sample(tmp_path / "calc")


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []

    def counting(source: bytes | str, filename: str = "<unknown>") -> ast.Module:
        seen.append(filename)
        return parse(source, filename)

    monkeypatch.setattr(diagnose, "parse", counting)
    return seen


def _edit(root: Path, old: str, new: str) -> None:
    path = root / ARITH
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


async def _diagnose(root: Path) -> RungResult:
    request = LadderRequest(rungs=["diagnose.files"])
    result = await run_ladder(root, request, bus=InMemoryEventBus(str(root)))
    (only,) = result.rungs
    return only


async def test_a_comment_only_edit_is_not_parsed(calc: Path, parsed: list[str]) -> None:
    _edit(calc, "def add", "# a note\n\ndef add")
    result = await _diagnose(calc)
    assert result.state == "green", result
    assert parsed == []


@pytest.mark.parametrize(
    ("old", "new", "state"),
    [
        ("return a + b", "return b + a", "green"),
        ("return a + b", "return a + b  # the sum", "green"),
        ("def add(a: int, b: int) -> int:", "def add(a: int, b: int) -> int\n# c", "red"),
    ],
)
async def test_any_other_edit_is_parsed(
    calc: Path, parsed: list[str], old: str, new: str, state: str
) -> None:
    _edit(calc, old, new)
    result = await _diagnose(calc)
    assert result.state == state, result
    assert parsed == [ARITH]
    if state == "red":
        assert result.tool == "python-syntax"
