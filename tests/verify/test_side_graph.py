"""Test-side imports: every import statement is found however deeply it is nested, and the
disk cache is read again only for files that changed."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from agent_habitat.verify.select.side_graph import SideImports, imported_names

NESTED = """
import a
try:
    import b
except ImportError:
    from c import d
def f():
    if True:
        with open("x") as g:
            from .e import h
class K:
    def m(self):
        for i in []:
            import j
match 1:
    case 1:
        import k
x = [__import__("not_a_statement")]
"""


def test_imports_nested_in_any_statement_are_found() -> None:
    names = imported_names(ast.parse(NESTED), "tests")
    assert names == {"a", "b", "c", "c.d", "tests.e", "tests.e.h", "j", "k"}


def test_a_cached_file_is_parsed_again_once_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "test_x.py"
    path.write_text("import a\n", encoding="utf-8")
    first = SideImports(tmp_path / "cache")
    assert first.names("test_x.py", path, "") == {"a"}
    first.save()
    again = SideImports(tmp_path / "cache")  # a new process: read from disk
    assert again.names("test_x.py", path, "") == {"a"}
    path.write_text("import bb\n", encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert again.names("test_x.py", path, "") == {"bb"}


def test_a_file_that_does_not_parse_imports_nothing_and_is_not_cached(tmp_path: Path) -> None:
    path = tmp_path / "test_x.py"
    path.write_text("import (\n", encoding="utf-8")
    cache = SideImports(tmp_path / "cache")
    assert cache.names("test_x.py", path, "") == set()
    path.write_text("import a\n", encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size class, same mtime
    assert cache.names("test_x.py", path, "") == {"a"}
