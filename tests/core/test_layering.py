"""The rooms and what each may import (docs/architecture.md), checked on the import graph."""

from __future__ import annotations

import grimp
import pytest

PACKAGE = "agent_habitat"
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
