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
