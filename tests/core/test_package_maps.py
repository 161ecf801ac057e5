"""Each package's opening comment (or docstring) names every module, file and folder it holds,
so the map at the top of a package cannot drift from what is in it."""

from __future__ import annotations

import ast
import importlib
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


NOT_MEMBERS = frozenset({"__init__.py", "__main__.py", "__pycache__", "py.typed"})


def members(package: Path) -> list[str]:
    """Its modules (by name), and every other file (the dashboard's .js, a node helper's .cjs)
    and folder (a subpackage, or scripts a child interpreter runs) as it is named on disk."""
    return sorted(
        entry.stem if entry.suffix == ".py" else entry.name
        for entry in package.iterdir()
        if entry.name not in NOT_MEMBERS and not entry.name.endswith(".pyc")
    )


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


def test_members_are_modules_files_and_folders(tmp_path: Path) -> None:
    for name in ("__init__.py", "page.py", "app.js", "py.typed", "helper.cjs"):
        (tmp_path / name).write_text("", encoding="utf-8")
    for folder in ("sub", "scripts", "__pycache__"):
        (tmp_path / folder).mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("", encoding="utf-8")
    assert members(tmp_path) == ["app.js", "helper.cjs", "page", "scripts", "sub"]


ARCHITECTURE = SRC.parents[1] / "docs" / "architecture.md"


def named_places(text: str) -> list[str]:
    """The backticked module paths of a text: `shell/models.py`, `verify/rungs/`, and a
    module's attribute as `verify/models.RUNGS` (routes such as `/api/meta` left out)."""
    return re.findall(r"`([a-z_]+(?:/[a-z_]+)*(?:/|\.py|/[a-z_]+\.[A-Za-z_]+))`", text)


def _exists(place: str) -> bool:
    base = SRC.parent.parent if place.startswith("tests/") else SRC
    if place.endswith(("/", ".py")):
        return (base / place).exists()
    module, _, attribute = place.rpartition(".")
    dotted = f"{SRC.name}.{module.replace('/', '.')}"
    return hasattr(importlib.import_module(dotted), attribute)


def test_the_architecture_doc_names_only_modules_that_exist() -> None:
    places = named_places(ARCHITECTURE.read_text(encoding="utf-8"))
    assert "verify/models.RUNGS" in places
    assert "mcp_tools/render.py" in places
    assert [place for place in places if not _exists(place)] == []


def test_named_places_reads_paths_and_attributes() -> None:
    text = "`a/b.py` `c/` `d/e.F` `/api/meta` `state.db` `x/<y>` `g/h/`"
    assert named_places(text) == ["a/b.py", "c/", "d/e.F", "g/h/"]
