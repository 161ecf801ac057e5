"""A change a type checker cannot tell from HEAD (comments, blank lines) gives
compile.project no work; anything a checker reads (a local annotation, a docstring, a
`# type:` comment, a `# type: ignore` moved, an inline `# mypy:` setting) still does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.events import InMemoryEventBus
from agent_habitat.verify import LadderRequest, RungResult, run_ladder, stop_type_daemon
from agent_habitat.verify.rungs import same_types
from agent_habitat.verify.rungs.same_types import same_types_as_head

ARITH = "src/calc/arith.py"


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    return build_sample(tmp_path / "calc")


def _edit(root: Path, old: str, new: str) -> None:
    path = root / ARITH
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_comments_and_blank_lines_are_the_same_types(calc: Path) -> None:
    _edit(calc, "def add", "# a note above\n\n\ndef add")
    _edit(calc, "return a + b", "return a + b  # the sum")
    assert same_types_as_head(calc, [ARITH])


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Not compiled into bytecode, read by every checker.
        ("return a + b", "total: str = a + b\n    return total"),
        ("return a + b", "return a + b  # type: ignore[return-value]"),
        ("def add", "# mypy: disallow-untyped-defs\ndef add"),
        ("def add", "# pyright: strict\ndef add"),
        ("def add(a: int, b: int) -> int:", 'def add(a: int, b: int) -> int:\n    """Sum."""'),
    ],
)
def test_what_a_checker_reads_is_a_change(calc: Path, old: str, new: str) -> None:
    _edit(calc, old, new)
    assert not same_types_as_head(calc, [ARITH])


def test_new_deleted_and_non_python_files_are_changes(calc: Path) -> None:
    (calc / "src/calc/extra.py").write_text("X = 1\n", encoding="utf-8")
    assert not same_types_as_head(calc, ["src/calc/extra.py"])
    (calc / ARITH).unlink()
    assert not same_types_as_head(calc, [ARITH])
    assert not same_types_as_head(calc, ["pyproject.toml"])
    assert not same_types_as_head(calc, [])


def _commit(root: Path) -> str:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost"]
    subprocess.run([*git, "commit", "-qam", "next"], cwd=root, check=True)
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return done.stdout.strip()


def test_heads_side_is_read_per_commit(calc: Path) -> None:
    """With HEAD's commit given, HEAD's side is read once per commit and file; a new
    commit is compared with its own content, never with the one read before."""
    first = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=calc, capture_output=True, text=True
    ).stdout.strip()
    _edit(calc, "def add", "# a note\ndef add")
    assert same_types_as_head(calc, [ARITH], first)
    assert same_types_as_head(calc, [ARITH], first)  # from the cache: the same answer
    _edit(calc, "return a + b", "return b + a")
    assert not same_types_as_head(calc, [ARITH], first)
    second = _commit(calc)
    assert same_types_as_head(calc, [ARITH], second)  # the tree is that commit's
    _edit(calc, "# a note\n", "# another note\n")
    assert same_types_as_head(calc, [ARITH], second)
    assert not same_types_as_head(calc, [ARITH], first)  # against the first: b + a


def _head(root: Path) -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return done.stdout.strip()


def test_whole_line_comments_are_told_from_the_lines_without_a_tree(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # HEAD's strings are read first (its tree, once per commit), then no tree is dumped.
    head = _head(calc)
    _edit(calc, "def add", "# one\n\n# two\ndef add")
    assert same_types._head_strings(calc, head, ARITH) is not None

    def no_tree(source: bytes) -> None:
        raise AssertionError("compared tree to tree")

    monkeypatch.setattr(same_types, "_read", no_tree)
    assert same_types_as_head(calc, [ARITH], head)


@pytest.mark.parametrize(
    ("head_text", "text"),
    [
        # Inside a docstring: its text changes.
        (
            'def f():\n    """A.\n\n    B.\n    """\n',
            'def f():\n    """A.\n    # c\n\n    B.\n    """\n',
        ),
        ('X = """a\n\nb"""\n', 'X = """a\n\n\nb"""\n'),
        # After a line a backslash continues: the comment ends the statement early.
        ("x = 1 + \\\n    2\n", "x = 1 + \\\n# c\n    2\n"),
        # A coding declaration moved past the second line no longer declares it.
        (
            "# -*- coding: latin-1 -*-\nS = 'caf\xe9'\n",
            "\n\n# -*- coding: latin-1 -*-\nS = 'caf\xe9'\n",
        ),
        ("X = 1\n", "# type: int\nX = 1\n"),
    ],
)
def test_a_comment_line_that_changes_what_is_read_is_a_change(
    tmp_path: Path, head_text: str, text: str
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    mod = root / "mod.py"
    mod.write_bytes(head_text.encode("utf-8", "surrogateescape"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "head"], cwd=root, check=True)
    mod.write_bytes(text.encode("utf-8", "surrogateescape"))
    assert not same_types_as_head(root, ["mod.py"], _head(root))


def test_a_directive_changed_in_a_comment_after_code_is_a_change(calc: Path) -> None:
    _edit(calc, "return a + b", "return a + b  # pyright: basic")
    _commit(calc)
    _edit(calc, "# pyright: basic", "# pyright: strict")
    assert not same_types_as_head(calc, [ARITH])


async def _compile(root: Path) -> RungResult:
    ladder = LadderRequest.model_validate({"rungs": ["compile.project"]})
    try:
        result = await run_ladder(root, ladder, bus=InMemoryEventBus(str(root)))
    finally:
        await stop_type_daemon(root)
    (only,) = result.rungs
    return only


@pytest.mark.anyio
async def test_a_comment_only_edit_gives_compile_project_no_work(calc: Path) -> None:
    _edit(calc, "def add", "# a note above\ndef add")
    result = await _compile(calc)
    assert result.state == "skipped", result
    assert "only comments or blank lines" in (result.reason or "")


@pytest.mark.anyio
async def test_a_local_annotation_is_still_type_checked(calc: Path) -> None:
    _edit(calc, "return a + b", "total: str = a + b  # a comment too\n    return total")
    result = await _compile(calc)
    assert result.state == "red", result
