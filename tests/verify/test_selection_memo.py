"""The import graph kept between climbs is handed back only while it is still true."""

from __future__ import annotations

from pathlib import Path

from agent_habitat.verify.selection_memo import SelectionMemo
from agent_habitat.verify.testdeps import RecordedDeps


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


def test_a_file_that_no_longer_parses_rebuilds_the_graph(tmp_path: Path) -> None:
    packages, memo, build = _package(tmp_path), SelectionMemo(), _Builds()
    _graph(memo, packages, tmp_path, build)
    (packages["pkg"] / "a.py").write_text("def f(:\n", encoding="utf-8")
    _graph(memo, packages, tmp_path, build)
    assert build.count == 2


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
