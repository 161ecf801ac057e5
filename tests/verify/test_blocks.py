"""Blocks of a module: what counts as a change of a function body, of the skeleton, or as
no change at all, and which block a code object starting at a line belongs to."""

from __future__ import annotations

import subprocess
import sys

from agent_habitat.verify.blocks import changed_blocks, file_blocks

SOURCE = """\
import functools


def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, limit=3):
        return [fn(a) for a in args][:limit]

    return wrapper


class Cache:
    size = 2

    @property
    def full(self):
        return len(self.items) > self.size

    @full.setter
    def full(self, value):
        self.items = [] if value else self.items

    def keys(self):
        return sorted(self.items, key=lambda k: (k in {"a", "b"}, k))
"""


def _changed(before: str, after: str) -> set[str] | None:
    old, new = file_blocks(before), file_blocks(after)
    assert old is not None
    assert new is not None
    return changed_blocks(old.to_json(), new)


def test_blocks_are_named_by_qualified_name_and_a_redefinition_is_numbered() -> None:
    blocks = file_blocks(SOURCE)
    assert blocks is not None
    assert sorted(blocks.blocks) == [
        "Cache.full",
        "Cache.full#2",
        "Cache.keys",
        "deco",
        "deco.<locals>.wrapper",
    ]


def test_comments_blank_lines_and_line_breaks_are_no_change() -> None:
    after = SOURCE.replace("    def keys(self):", "    # sorted keys\n\n    def keys(self):")
    after = after.replace("return wrapper", "return (\n        wrapper\n    )")
    assert _changed(SOURCE, after) == set()


def test_a_change_inside_a_nested_function_changes_only_that_block() -> None:
    assert _changed(SOURCE, SOURCE.replace("[:limit]", "[:limit + 1]")) == {"deco.<locals>.wrapper"}
    # A lambda belongs to the function around it.
    assert _changed(SOURCE, SOURCE.replace("(k in {", "(k not in {")) == {"Cache.keys"}
    assert _changed(SOURCE, SOURCE.replace("> self.size", ">= self.size")) == {"Cache.full"}
    assert _changed(SOURCE, SOURCE.replace("[] if value", "[0] if value")) == {"Cache.full#2"}


def test_import_time_code_is_the_skeleton() -> None:
    # A nested function's default is evaluated when the outer one runs: the outer body.
    assert _changed(SOURCE, SOURCE.replace("limit=3", "limit=4")) == {"deco"}
    assert _changed(SOURCE, SOURCE.replace("size = 2", "size = 3")) is None
    assert _changed(SOURCE, SOURCE.replace("def keys(self):", "def keys(self, x=0):")) is None
    assert _changed(SOURCE, SOURCE + "\n\ndef extra():\n    pass\n") is None
    # A nested function's decorator runs when the outer function does: the outer body.
    assert _changed(SOURCE, SOURCE.replace("    @functools.wraps(fn)\n", "")) == {"deco"}


def test_constants_of_equal_value_but_other_type_differ() -> None:
    assert _changed("def f():\n    return 0\n", "def f():\n    return False\n") == {"f"}
    assert _changed("def f():\n    return 1\n", "def f():\n    return 1.0\n") == {"f"}


def test_hashes_do_not_depend_on_string_hashing() -> None:
    # A set literal compiles to a frozenset whose order follows the per-process hash seed.
    code = (
        "import sys\nfrom agent_habitat.verify.blocks import file_blocks\n"
        'b = file_blocks(\'def f(k):\\n    return k in {"a", "b", "c", "d", "e"}\\n\')\n'
        "sys.stdout.write(b.blocks['f'])"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(digests) == 1


def test_a_code_object_is_found_by_its_first_line() -> None:
    blocks = file_blocks(SOURCE)
    assert blocks is not None
    lines = SOURCE.splitlines()
    first = {
        name: lines.index(text) + 1
        for name, text in (
            ("deco", "def deco(fn):"),
            ("deco.<locals>.wrapper", "    @functools.wraps(fn)"),
            ("Cache.full", "    @property"),
            ("Cache.keys", "    def keys(self):"),
        )
    }
    for name, line in first.items():
        assert blocks.block_at(line) == name
    comprehension = lines.index("        return [fn(a) for a in args][:limit]") + 1
    assert blocks.block_at(comprehension) == "deco.<locals>.wrapper"
    lambda_line = lines.index(
        '        return sorted(self.items, key=lambda k: (k in {"a", "b"}, k))'
    )
    assert blocks.block_at(lambda_line + 1) == "Cache.keys"
    assert blocks.block_at(lines.index("    size = 2") + 1) is None  # the skeleton


def test_a_file_that_does_not_compile_has_no_blocks() -> None:
    assert file_blocks("def f(:\n") is None
    assert file_blocks(b"x = 1\0\n") is None
