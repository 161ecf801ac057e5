"""The import graph kept between climbs is handed back only while it is still true."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_habitat.verify.select.memo import SelectionMemo
from agent_habitat.verify.select.testdeps import RecordedDeps


class _Builds:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> object:
        self.count += 1
        return object()


def _package(tmp_path: Path) -> dict[str, Path]:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pkg import a\n", encoding="utf-8")
    (pkg / "a.py").write_text("import os\n\n\ndef f():\n    return 1\n", encoding="utf-8")
    return {"pkg": pkg}


def _graph(memo: SelectionMemo, packages: dict[str, Path], tmp: Path, build: _Builds) -> object:
    return memo.graph(packages, tmp / "cache", build)  # type: ignore[arg-type]


def test_a_body_edit_keeps_the_graph(tmp_path: Path) -> None:
    packages, memo, build = _package(tmp_path), SelectionMemo(), _Builds()
    first = _graph(memo, packages, tmp_path, build)
    (packages["pkg"] / "a.py").write_text("import os\n\n\ndef f():\n    return 2\n", "utf-8")
    assert _graph(memo, packages, tmp_path, build) is first
    assert build.count == 1


def test_a_new_import_rebuilds_the_graph(tmp_path: Path) -> None:
    packages, memo, build = _package(tmp_path), SelectionMemo(), _Builds()
    first = _graph(memo, packages, tmp_path, build)
    (packages["pkg"] / "a.py").write_text("import os\n\n\ndef f():\n    import pkg\n", "utf-8")
    assert _graph(memo, packages, tmp_path, build) is not first
    assert build.count == 2


def test_a_new_module_rebuilds_the_graph(tmp_path: Path) -> None:
    packages, memo, build = _package(tmp_path), SelectionMemo(), _Builds()
    _graph(memo, packages, tmp_path, build)
    (packages["pkg"] / "b.py").write_text("X = 1\n", encoding="utf-8")
    _graph(memo, packages, tmp_path, build)
    (packages["pkg"] / "b.py").unlink()
    _graph(memo, packages, tmp_path, build)
    assert build.count == 3


def test_a_file_that_no_longer_parses_rebuilds_the_graph_when_its_imports_went(
    tmp_path: Path,
) -> None:
    packages, memo, build = _package(tmp_path), SelectionMemo(), _Builds()
    _graph(memo, packages, tmp_path, build)
    (packages["pkg"] / "a.py").write_text("def f(:\n", encoding="utf-8")
    _graph(memo, packages, tmp_path, build)
    assert build.count == 2


def test_a_syntax_error_in_a_body_keeps_the_graph(tmp_path: Path) -> None:
    # The imports are read as text: the graph they make is the same, and the broken module's
    # importers (and tests) are selected through it as before; diagnose.files names the error.
    packages, memo, build = _package(tmp_path), SelectionMemo(), _Builds()
    first = _graph(memo, packages, tmp_path, build)
    (packages["pkg"] / "a.py").write_text("import os\n\n\ndef f(:\n    return 1\n", "utf-8")
    assert _graph(memo, packages, tmp_path, build) is first


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "from os import (\n    path,\n    sep,\n)\n",
            "from os import (\n    path,\n    sys,\n)\n",
        ),
        ("from os \\\n    import path\n", "from sys \\\n    import path\n"),
        ("from os import path, \\\n    sep\n", "from os import path, \\\n    sys\n"),
        ("x = 1; import os\n", "x = 1; import sys\n"),
        ("if True:\n    import os\n", "if True:\n    import sys\n"),
    ],
    ids=["brackets", "backslash-before", "backslash-after", "semicolon", "nested"],
)
def test_any_change_to_an_import_statement_rebuilds_the_graph(
    tmp_path: Path, before: str, after: str
) -> None:
    packages, memo, build = _package(tmp_path), SelectionMemo(), _Builds()
    (packages["pkg"] / "b.py").write_text(before, encoding="utf-8")
    first = _graph(memo, packages, tmp_path, build)
    (packages["pkg"] / "b.py").write_text(before + "\nX = 1\n", encoding="utf-8")
    assert _graph(memo, packages, tmp_path, build) is first  # a body edit keeps it
    (packages["pkg"] / "b.py").write_text(after + "\nX = 1\n", encoding="utf-8")
    assert _graph(memo, packages, tmp_path, build) is not first


def test_dependency_data_is_read_again_when_its_file_changes(tmp_path: Path) -> None:
    store = tmp_path / "testdeps"
    store.mkdir()
    (store / "deps.json").write_text("1", encoding="utf-8")
    memo = SelectionMemo()
    loads: list[Path] = []

    def load(directory: Path) -> RecordedDeps | None:
        loads.append(directory)
        return None

    memo.deps(store, load)
    memo.deps(store, load)
    assert len(loads) == 1
    (store / "deps.json").write_text("22", encoding="utf-8")
    memo.deps(store, load)
    assert len(loads) == 2
