"""The core presents nothing: rich rendering lives on the CLI side (issue 7, rooms)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agent_habitat

CORE = ("verify", "proc", "shell", "events", "store")
PACKAGE = Path(agent_habitat.__file__).parent


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("room", CORE)
def test_no_core_module_imports_rich(room: str) -> None:
    modules = sorted((PACKAGE / room).rglob("*.py"))
    assert modules, f"no modules under {room}/"
    offenders = [str(p.relative_to(PACKAGE)) for p in modules if "rich" in _imports(p)]
    assert offenders == []


def test_the_check_sees_rich_where_the_cli_uses_it() -> None:
    assert "rich" in _imports(PACKAGE / "cli" / "ladder_view.py")
