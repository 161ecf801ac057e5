"""A package module loaded by dotted name (a plugin table, `importlib.import_module`) is
imported, for selection, by the module whose string names it (select/named_imports.py):
mistune 3.0.2's plugins were loaded so, and a broken plugin affected no test by the import
graph while the suite's plugin tests failed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agent_habitat.verify.config import LadderConfig
from agent_habitat.verify.layout import discover_layout
from agent_habitat.verify.select.memo import SelectionMemo
from agent_habitat.verify.select.selection import Impact, analyse_impact
from agent_habitat.verify.snapshot import take_snapshot
from git_tree import commit_tree, git, write

_PROJECT = {
    "src/md/__init__.py": "",
    "src/md/plugins/__init__.py": (
        "import importlib\n\n"
        "PLUGINS = {\n"
        "    'strike': 'md.plugins.formatting.strike',\n"
        '    "table": "md.plugins.table:table",\n'
        "}\n\n\n"
        "def load(name):\n"
        "    module, _, attr = PLUGINS[name].replace(':', '.').rpartition('.')\n"
        "    return getattr(importlib.import_module(module), attr)\n"
    ),
    "src/md/plugins/formatting.py": "def strike(text):\n    return '~' + text + '~'\n",
    "src/md/plugins/table.py": "def table(rows):\n    return len(rows)\n",
    "src/md/plugins/unused.py": "def unused():\n    return 0\n",
    "src/md/render.py": "def render(text):\n    return text\n",
    "tests/test_plugins.py": (
        "from md.plugins import load\n\n\n"
        "def test_strike():\n    assert load('strike')('a') == '~a~'\n"
    ),
    "tests/test_render.py": (
        "from md.render import render\n\n\ndef test_render():\n    assert render('a') == 'a'\n"
    ),
    "pyproject.toml": '[project]\nname = "md"\nversion = "0"\n',
}


def _impact(root: Path, tmp_path: Path, memo: SelectionMemo | None = None) -> Impact:
    config = LadderConfig()
    snap = take_snapshot(root)
    layout = discover_layout(root, config)
    return analyse_impact(
        layout, snap.touched, snap.deleted, config, tmp_path / "grimp", memo, head=snap.head
    )


def _restore(root: Path) -> None:
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=root, check=True)


def test_a_module_named_by_a_string_selects_the_tests_of_its_loader(tmp_path: Path) -> None:
    root = commit_tree(tmp_path / "md", _PROJECT)
    memo = SelectionMemo()
    write(root, "src/md/plugins/formatting.py", "def strike(text):\n    return text\n")
    assert _impact(root, tmp_path, memo).selection.tests == ["tests/test_plugins.py"]
    _restore(root)
    # `pkg.mod:attr` names the module too.
    write(root, "src/md/plugins/table.py", "def table(rows):\n    return 0\n")
    assert _impact(root, tmp_path, memo).selection.tests == ["tests/test_plugins.py"]
    _restore(root)
    # A module no string and no import names is still no test's.
    write(root, "src/md/plugins/unused.py", "def unused():\n    return 1\n")
    assert _impact(root, tmp_path, memo).selection.tests == []


def test_a_name_added_to_a_string_is_seen_by_a_graph_kept_in_memory(tmp_path: Path) -> None:
    # A host keeps the graph across verifies and rebuilds it only when a module's import
    # lines change: a line that names a module counts as one.
    root = commit_tree(tmp_path / "md", _PROJECT)
    memo = SelectionMemo()
    write(root, "src/md/render.py", "def render(text):\n    return text + ''\n")
    assert _impact(root, tmp_path, memo).selection.tests == ["tests/test_render.py"]
    _restore(root)
    plugins = (root / "src/md/plugins/__init__.py").read_text(encoding="utf-8")
    named = plugins.replace("}\n", "    'render': 'md.render.render',\n}\n")
    write(root, "src/md/plugins/__init__.py", named)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a plugin named")
    write(root, "src/md/render.py", "def render(text):\n    return text + ''\n")
    assert _impact(root, tmp_path, memo).selection.tests == [
        "tests/test_plugins.py",
        "tests/test_render.py",
    ]
