"""Each package's opening comment (or docstring) names every module and subpackage it holds,
so the map at the top of a package cannot drift from what is in it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import agent_habitat

SRC = Path(agent_habitat.__file__).parent
PACKAGES = sorted(init.parent for init in SRC.rglob("__init__.py"))


def opening(init: Path) -> str:
    """The docstring of `init` and the comment lines it starts with."""
    text = init.read_text(encoding="utf-8")
    comments: list[str] = []
    for line in text.splitlines():
        if line.startswith("#"):
            comments.append(line[1:])
        elif line.strip() or comments:
            break
    return (ast.get_docstring(ast.parse(text)) or "") + "\n" + "\n".join(comments)


def members(package: Path) -> list[str]:
    modules = {p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")}
    subpackages = {d.name for d in package.iterdir() if (d / "__init__.py").is_file()}
    return sorted(modules | subpackages)


def test_every_package_is_checked() -> None:
    assert SRC in PACKAGES
    assert len(PACKAGES) >= 10


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(SRC.parent)))
def test_the_opening_comment_names_every_module(package: Path) -> None:
    text = opening(package / "__init__.py")
    missing = [
        name
        for name in members(package)
        if not re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text)
    ]
    where = package.relative_to(SRC.parent) / "__init__.py"
    assert not missing, f"{where}: name {missing} in its opening comment, a line each"
