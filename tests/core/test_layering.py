"""The rooms and what each may import (docs/architecture.md), checked on the import graph.

The rooms table of docs/architecture.md is the one map: it is read here, every room of the
graph must have its row, and each row's "may import" must be exactly what the room imports
(`errors` aside), never a room on a higher floor, with no circle between rooms.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import grimp
import pytest

PACKAGE = "agent_habitat"
DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
ALWAYS = frozenset({"errors"})
"""What every room may import without listing it."""
CORE = (
    "proc",
    "shell",
    "verify",
    "events",
    "store",
    "habitat",
    "project",
    "trust",
    "verbs",
    "workspace",
    "config",
    "limits",
)
ADAPTERS = ("mcp_tools", "cli", "host")
# reach/: the way to a host from another process, a floor below the adapters that use it
# (cli, mcp_tools' terminal_host, host/ itself). It sees the verbs and what lies below them,
# never the server side of host/, the MCP SDK, Starlette or the composition root
# (`Habitat`), as mypy's dmypy/client.py never imports dmypy_server.
REACH = "reach"
REACH_NEVER = (f"{PACKAGE}.host", f"{PACKAGE}.mcp_tools", f"{PACKAGE}.cli", f"{PACKAGE}.habitat")
REACH_NEVER_EXTERNAL = ("mcp", "starlette", "uvicorn")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(PACKAGE)


@dataclass(frozen=True)
class Room:
    floor: int
    may_import: frozenset[str]


def rooms_table(text: str) -> dict[str, Room]:
    """The rows of the table under `## The rooms`: room → floor and what it may import."""
    section = text.split("## The rooms", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, Room] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].isdigit():
            continue
        names = re.findall(r"`([^`]+)`", cells[1])
        assert len(names) == 1, f"architecture.md: one room a row, not {cells[1]!r}"
        room = names[0].rstrip("/")
        assert room not in rows, f"architecture.md: {room} has two rows"
        listed = frozenset(name.rstrip("/") for name in re.findall(r"`([^`]+)`", cells[3]))
        rows[room] = Room(int(cells[0]), listed)
    return rows


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else PACKAGE


def room_imports(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    """Each room of the package and the other rooms its modules import directly."""
    found: dict[str, set[str]] = {_room(m): set() for m in graph.modules}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if _room(imported) != _room(module):
                found[_room(module)].add(_room(imported))
    return found


@pytest.fixture(scope="module")
def table() -> dict[str, Room]:
    return rooms_table(DOC.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def imports(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    return room_imports(graph)


def test_every_room_has_a_row_and_every_row_a_room(
    table: dict[str, Room], imports: dict[str, set[str]]
) -> None:
    assert sorted(set(imports) - set(table)) == [], "add these rooms to docs/architecture.md"
    assert sorted(set(table) - set(imports)) == [], "rows of docs/architecture.md with no room"


def test_each_room_imports_exactly_what_its_row_says(
    table: dict[str, Room], imports: dict[str, set[str]]
) -> None:
    wrong = {}
    for room, imported in sorted(imports.items()):
        row = table.get(room)
        if row is None:
            continue  # the test above names it
        unlisted = sorted(imported - row.may_import - ALWAYS)
        unused = sorted(row.may_import - imported)
        if unlisted or unused:
            wrong[room] = {"imports, not listed": unlisted, "listed, not imported": unused}
    assert not wrong, f"docs/architecture.md's rooms table and the import graph disagree: {wrong}"


def test_no_row_lets_a_room_import_up_a_floor(table: dict[str, Room]) -> None:
    up = {
        room: sorted(
            name for name in row.may_import if name in table and table[name].floor < row.floor
        )
        for room, row in table.items()
    }
    assert {room: names for room, names in up.items() if names} == {}
    unknown = {room: sorted(row.may_import - set(table)) for room, row in table.items()}
    assert {room: names for room, names in unknown.items() if names} == {}


def test_the_rooms_import_each_other_in_no_circle(imports: dict[str, set[str]]) -> None:
    try:
        tuple(TopologicalSorter(imports).static_order())
    except CycleError as exc:
        pytest.fail(f"rooms in a circle: {' → '.join(exc.args[1])}")


def test_the_table_reader_sees_a_room_that_is_missing() -> None:
    text = "## The rooms\n| floor | room | holds | may import |\n|---|---|---|---|\n"
    text += "| 2 | `a/` | x | `b` `errors` |\n| 3 | `b` | y | — |\n## Next\n| 1 | `c` | z | — |\n"
    assert rooms_table(text) == {
        "a": Room(2, frozenset({"b", "errors"})),
        "b": Room(3, frozenset()),
    }


def _present(graph: grimp.ImportGraph, names: tuple[str, ...]) -> list[str]:
    return [f"{PACKAGE}.{name}" for name in names if f"{PACKAGE}.{name}" in graph.modules]


@pytest.mark.parametrize("core", CORE)
def test_core_never_imports_an_adapter_even_indirectly(graph: grimp.ImportGraph, core: str) -> None:
    importer = f"{PACKAGE}.{core}"
    assert importer in graph.modules
    for adapter in _present(graph, ADAPTERS):
        chain = graph.find_shortest_chain(importer=importer, imported=adapter, as_packages=True)
        assert chain is None, f"{importer} reaches {adapter}: {' → '.join(chain or ())}"


def test_adapters_take_the_built_habitat_instead_of_opening_the_store(
    graph: grimp.ImportGraph,
) -> None:
    for adapter in _present(graph, ADAPTERS):
        for module in sorted(graph.find_descendants(adapter) | {adapter}):
            imported = graph.find_modules_directly_imported_by(module)
            store = {name for name in imported if name.startswith(f"{PACKAGE}.store")}
            assert not store, f"{module} imports {store}: use Habitat.journal / Habitat.db"


def test_the_mcp_servers_do_not_import_the_cli(graph: grimp.ImportGraph) -> None:
    chain = graph.find_shortest_chain(
        importer=f"{PACKAGE}.mcp_tools", imported=f"{PACKAGE}.cli", as_packages=True
    )
    assert chain is None, " → ".join(chain or ())


@pytest.fixture(scope="module")
def runtime_graph() -> grimp.ImportGraph:
    """Imports that run (not those under `TYPE_CHECKING`), third-party packages included."""
    return grimp.build_graph(
        PACKAGE, include_external_packages=True, exclude_type_checking_imports=True
    )


@pytest.mark.parametrize("imported", REACH_NEVER + REACH_NEVER_EXTERNAL)
def test_reach_never_imports_the_server_side_even_indirectly(
    runtime_graph: grimp.ImportGraph, imported: str
) -> None:
    importer = f"{PACKAGE}.{REACH}"
    assert importer in runtime_graph.modules
    assert imported in runtime_graph.modules, f"{imported} is not in the graph: a stale name"
    chain = runtime_graph.find_shortest_chain(
        importer=importer, imported=imported, as_packages=True
    )
    assert chain is None, f"{importer} reaches {imported}: {' → '.join(chain or ())}"


@pytest.mark.parametrize("core", CORE)
def test_core_never_reaches_for_a_host(graph: grimp.ImportGraph, core: str) -> None:
    chain = graph.find_shortest_chain(
        importer=f"{PACKAGE}.{core}", imported=f"{PACKAGE}.{REACH}", as_packages=True
    )
    assert chain is None, " → ".join(chain or ())


def test_the_mcp_servers_reach_a_host_without_importing_its_server(
    graph: grimp.ImportGraph,
) -> None:
    # terminal_host starts and stops hosts through reach/; host/ serves mcp_tools' apps, so
    # an import of host/ from mcp_tools would run up a floor.
    chain = graph.find_shortest_chain(
        importer=f"{PACKAGE}.mcp_tools", imported=f"{PACKAGE}.host", as_packages=True
    )
    assert chain is None, " → ".join(chain or ())


def _top_level_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_bench_never_imports_tests() -> None:
    repo = DOC.parents[1]
    tests = repo / "tests"
    names = {p.stem for p in tests.glob("*.py")} | {
        d.name for d in tests.iterdir() if (d / "__init__.py").is_file()
    }
    bench = sorted((repo / "bench").rglob("*.py"))
    assert bench, "no bench/ scripts found"
    wrong = {
        str(path.relative_to(repo)): sorted(_top_level_imports(path) & names) for path in bench
    }
    assert {path: found for path, found in wrong.items() if found} == {}
    reaching = [
        str(path.relative_to(repo))
        for path in bench
        if re.search(r"sys\.path.*tests|spec_from_file_location\(.*tests", path.read_text())
    ]
    assert reaching == []


def _modules_in_a_circle(graph: grimp.ImportGraph, package: str) -> list[str]:
    """A circle between the members of `package` (its modules, its subpackages taken whole),
    or [] when none."""
    members = graph.find_children(package)
    imports: dict[str, set[str]] = {member: set() for member in members}
    for member in members:
        for module in graph.find_descendants(member) | {member}:
            for imported in graph.find_modules_directly_imported_by(module):
                target = ".".join(imported.split(".")[: package.count(".") + 2])
                if target in imports and target != member:
                    imports[member].add(target)
    try:
        tuple(TopologicalSorter(imports).static_order())
    except CycleError as exc:
        return list(exc.args[1])
    return []


def test_no_package_s_modules_import_each_other_in_a_circle(
    runtime_graph: grimp.ImportGraph,
) -> None:
    # Imports that run, deferred ones included; a type named under `TYPE_CHECKING` (a field of
    # one module's dataclass typed by another's class) loads nothing and is left out.
    packages = sorted(
        module
        for module in runtime_graph.modules
        if module.split(".")[0] == PACKAGE and runtime_graph.find_children(module)
    )
    assert f"{PACKAGE}.verify.runner" in packages
    circles = {p: c for p in packages if (c := _modules_in_a_circle(runtime_graph, p))}
    assert circles == {}


def test_the_circle_finder_sees_one() -> None:
    graph = grimp.ImportGraph()
    for module in ("p", "p.a", "p.b", "p.b.c", "p.d"):
        graph.add_module(module)
    graph.add_import(importer="p.a", imported="p.b.c")
    graph.add_import(importer="p.b.c", imported="p.a")
    graph.add_import(importer="p.d", imported="p.a")
    assert sorted(set(_modules_in_a_circle(graph, "p"))) == ["p.a", "p.b"]
    assert _modules_in_a_circle(graph, "p.b") == []
