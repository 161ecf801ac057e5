"""Whether a change is the same code as HEAD (no test can run differently) is told from the
lines when the edit is one run of whole-line comments and blank lines: the touched module is
not compiled then (80 ms of a comment's verify for a 900-line module at load 40). Anything
else, or a comment line inside one of HEAD's multi-line strings, is compared code to code."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import agent_habitat.verify.select.deps as deps
from agent_habitat.cli.demo_sample import build_sample
from agent_habitat.verify.blocks import FileBlocks, file_blocks
from agent_habitat.verify.select.same_code import same_code_as_head

ARITH = "src/calc/arith.py"


@pytest.fixture
def calc(tmp_path: Path) -> tuple[Path, str]:
    root = build_sample(tmp_path / "calc")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return root, head.stdout.strip()


def _edit(root: Path, old: str, new: str) -> None:
    path = root / ARITH
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _compiled(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The sources compiled from now on (HEAD's are cached per commit)."""
    seen: list[bytes] = []
    real = file_blocks

    def counting(source: bytes | str) -> FileBlocks | None:
        seen.append(source if isinstance(source, bytes) else source.encode())
        return real(source)

    monkeypatch.setattr(deps, "file_blocks", counting)
    return seen


def test_whole_line_comments_are_the_same_code_without_compiling(
    calc: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, head = calc
    _edit(root, "def add", "# a note above\n\n# and one more\ndef add")
    compiled = _compiled(monkeypatch)
    assert same_code_as_head(root, [ARITH], head)
    now = (root / ARITH).read_bytes()
    assert now not in compiled


def test_a_comment_after_code_is_compared_code_to_code(
    calc: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, head = calc
    _edit(root, "return a + b", "return a + b  # the sum")
    compiled = _compiled(monkeypatch)
    assert same_code_as_head(root, [ARITH], head)
    assert (root / ARITH).read_bytes() in compiled


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("return a + b", "return b + a"),
        # A comment line inside a docstring is its text: the code's constants change.
        (
            "def add(a: int, b: int) -> int:",
            'def add(a: int, b: int) -> int:\n    """A.\n\n    B."""',
        ),
    ],
)
def test_a_code_change_is_no_longer_the_same_code(
    calc: tuple[Path, str], old: str, new: str
) -> None:
    root, head = calc
    _edit(root, old, new)
    assert not same_code_as_head(root, [ARITH], head)


def test_a_comment_line_inside_a_docstring_is_compared_code_to_code(
    calc: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = calc
    doc = 'def add(a: int, b: int) -> int:\n    """A.\n\n    B."""'
    _edit(root, "def add(a: int, b: int) -> int:", doc)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "doc"],
        cwd=root,
        check=True,
    )
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    _edit(root, '    """A.\n\n', '    """A.\n    # not a comment: text\n\n')
    compiled = _compiled(monkeypatch)
    assert not same_code_as_head(root, [ARITH], commit.stdout.strip())
    assert (root / ARITH).read_bytes() in compiled
